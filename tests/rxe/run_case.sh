#!/usr/bin/env bash
# shellcheck disable=SC2054  # commas in the values below are not array separators
# One soft-RoCE test (see CMakeLists.txt): run_case.sh CASE boots one qemu guest with rxe0 (or
# a pair of guests joined by a virtual link) through tests/vm and runs guest-suites.sh there.
# Needs BRAID_BIN (the build's bin directory). Exit 0 pass, 1 fail, 77 skipped (the guest cannot
# come up here, or the verbs plugin is not built), except with CI=true, where those fail.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
VM=$HERE/../vm
: "${BRAID_BIN:?BRAID_BIN must name the bin directory of the build}"
BRAID_BIN=$(cd "$BRAID_BIN" && pwd -P)
export BRAID_BIN
LIB=$(cd "$BRAID_BIN/../lib" && pwd -P)

skip_or_fail() {
  if [[ ${CI:-} == true ]]; then echo "FAIL (mandatory with CI=true): $*" >&2; exit 1; fi
  echo "SKIPPED: $*"; exit 77
}
need_plugin() {
  [[ -e $LIB/libbraid-transport-$1.so ]] ||
    skip_or_fail "$1 plugin not built ($LIB/libbraid-transport-$1.so is missing)"
}
[[ $EUID == 0 ]] || skip_or_fail "the qemu guest needs root (packages, /boot, 9p export of /)"

# UCX over rxe0 only: without UCX_TLS it would pick shared memory between local ranks. UCP's
# rc_verbs needs ud_verbs as its wire-up transport.
# BRAID_INTRANODE=off: the ranks of one guest share a node, and the node-local shared-memory
# path would carry their collectives instead of the transport under test.
UCX_RXE=(BRAID_TRANSPORT=ucx UCX_TLS=rc_verbs,ud_verbs,self UCX_NET_DEVICES=rxe0:1 BRAID_INTRANODE=off)
# The registration cache must be on, hit and invalidated in the transport suite's `pages` case
# (BRAID_TEST_EXPECT_RCACHE), and with BRAID_VERBS_DIRECT=on (off by default) eager messages
# must go straight into advertised receives in its `direct` case (BRAID_TEST_EXPECT_DIRECT),
# every other case and suite running with adverts on too; the mixed case runs without the cache,
# so with per-rendezvous registrations and no adverts.
VERBS=(BRAID_TRANSPORT=verbs BRAID_VERBS_DEVICE=rxe0:1 BRAID_INTRANODE=off BRAID_TEST_EXPECT_RCACHE=1
       BRAID_VERBS_DIRECT=on BRAID_TEST_EXPECT_DIRECT=1)
PER_PEER=(BRAID_VERBS_RECV_QUEUES=P,4096,32:P,65536,16 BRAID_VERBS_RNR_RETRY=0)
# The transport tests on 3 ranks cover every 2-rank case too (each pair of ranks), and their
# burst comes from more than one peer; 2 ranks where that is enough, to keep the time down.
# The multi-process suite runs on 3 ranks in one guest (the non-power-of-two paths); its
# 2-rank run over the device is the pair cases' (one rank in each guest), so the single-guest
# cases skip it: under TCG each run costs about a minute. UCX in one guest runs the transport
# suite only (its 3-rank multi-process run took 4 minutes), on 3 ranks so that UCX's rc_verbs
# still meets bursts from more than one peer, and across the link (pair.ucx) the transport suite
# only too: the UCX plugin's collectives are the same calls into it whatever transport UCX picks
# underneath, and run on the host in every multi-process variant (over UCX's shared-memory
# transports); over rxe0 the multi-process suite cost a minute of the CI's 45.
SUITES=(transport:3 multiproc:3)
pair=0
case ${1:?case} in
  ucx)             envs=("${UCX_RXE[@]}"); SUITES=(transport:3) ;;
  verbs.per_peer)  need_plugin verbs; envs=("${VERBS[@]}" "${PER_PEER[@]}"); SUITES+=(memlock) ;;
  verbs.shared)    need_plugin verbs
                   envs=("${VERBS[@]}" BRAID_VERBS_RECV_QUEUES=S,256,512:S,8192,256
                         BRAID_TEST_EXPECT_SRQ_LIMIT=1) ;;
  verbs.mixed)     need_plugin verbs
                   envs=("${VERBS[@]}" BRAID_VERBS_RECV_QUEUES=P,4096,32:S,65536,64
                         BRAID_VERBS_RCACHE=off BRAID_TEST_EXPECT_RCACHE=0 BRAID_TEST_EXPECT_DIRECT=0)
                   SUITES[0]=transport:2 ;;
  pair.ucx)        pair=1; envs=("${UCX_RXE[@]}"); SUITES=(pair-transport:29517) ;;
  # Across the link on the default queues (no BRAID_VERBS_RECV_QUEUES): what an application
  # gets, and the setting chosen by measurements across this link (docs/verbs.md). Per-peer
  # credits without RNR retries are proven by verbs.per_peer.
  pair.verbs)      pair=1; need_plugin verbs; envs=("${VERBS[@]}")
                   SUITES=(pair-transport:29517 pair-multiproc:29518) ;;
  *) echo "run_case.sh: unknown case '$1'" >&2; exit 2 ;;
esac

# The guest runs in a scratch directory (its cwd is shared read-write with the host).
work=$(mktemp -d "${TMPDIR:-/tmp}/braid-rxe.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
start=$SECONDS
rc=0
if (( pair )); then
  env "${envs[@]}" "$VM/run-in-guest-pair" --timeout 1200 --grace 60 -- \
    "$HERE/guest-suites.sh" "${SUITES[@]}" || rc=$?
else
  env "${envs[@]}" "$VM/run-in-guest" --timeout 1500 -- "$HERE/guest-suites.sh" "${SUITES[@]}" || rc=$?
fi
echo "rxe.$1: guest run exited $rc after $(( SECONDS - start ))s"
case $rc in
  0) exit 0 ;;
  125) skip_or_fail "the qemu guest with rxe0 could not be set up (see the messages above)" ;;
  124) echo "FAIL: the guest run timed out"; exit 1 ;;
  *) exit 1 ;;
esac
