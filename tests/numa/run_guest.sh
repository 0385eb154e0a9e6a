#!/bin/bash
# Runs a command in the 2-NUMA-node qemu guest through the project's guest runner:
#   run_guest.sh RUNNER [runner options] -- command...
# The runner missing, not being root, or the guest failing to boot (runner exit 125) is a
# skip (exit 77, with the reason) unless CI=true, where the guest tests are mandatory.
runner=$1
shift
skip() {
  if [[ ${CI:-} == true ]]; then
    echo "FAIL (CI=true makes the NUMA guest tests mandatory): $*" >&2
    exit 1
  fi
  echo "SKIP: $*" >&2
  exit 77
}
[[ -x $runner ]] || skip "guest runner $runner is missing (set BRAID_VM_RUNNER)"
[[ $(id -u) == 0 ]] || skip "the qemu guest runner needs root"
"$runner" "$@"
rc=$?
[[ $rc == 125 ]] && skip "the qemu guest could not boot (runner exit 125)"
exit $rc
