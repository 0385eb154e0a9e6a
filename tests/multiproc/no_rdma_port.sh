#!/usr/bin/env bash
# BRAID_TRANSPORT=verbs on a machine without an active RDMA port: init fails, naming the verbs
# plugin, what it found and what to do; auto selection falls back to UCX. Skipped (77) where an
# RDMA port is active (inside the soft-RoCE guest the rxe tests cover verbs).
#   no_rdma_port.sh BRAIDRUN PROGRAM
set -uo pipefail
braidrun=$1 program=$2
if compgen -G '/sys/class/infiniband/*/ports/*/state' >/dev/null &&
   grep -qs ACTIVE /sys/class/infiniband/*/ports/*/state; then
  echo "SKIPPED: this machine has an active RDMA port"; exit 77
fi
out=$("$braidrun" -n 2 --transport verbs "$program" 2>&1); rc=$?
echo "$out"
[[ $rc -ne 0 ]] || { echo "FAIL: BRAID_TRANSPORT=verbs succeeded without an RDMA port"; exit 1; }
for want in "BRAID_TRANSPORT=verbs: no transport could be loaded" "libbraid-transport-verbs.so: no active port on any RDMA device" "BRAID_TRANSPORT=ucx"; do
  grep -qF -- "$want" <<<"$out" || { echo "FAIL: the error does not say: $want"; exit 1; }
done
out=$("$braidrun" -n 2 --transport auto "$program" 2>&1) || { echo "$out"; echo "FAIL: auto did not fall back to ucx"; exit 1; }
grep -q "over ucx" <<<"$out" || { echo "$out"; echo "FAIL: auto did not pick ucx"; exit 1; }
echo "PASS"
