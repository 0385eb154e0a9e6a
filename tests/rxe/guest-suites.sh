#!/usr/bin/env bash
# Runs INSIDE a test guest (tests/vm/run-in-guest[-pair]): the named suites one after another,
# each with its own time limit, even when an earlier one failed, and reports each one's result
# on a "RESULT <suite>: PASS|FAIL" line and all of them on a closing "SUITES" line.
#   guest-suites.sh SUITE...      (BRAID_BIN = the build's bin directory)
# Suites (the transport comes from the environment: BRAID_TRANSPORT, UCX_*, BRAID_VERBS_*):
#   transport:N   braid_transport_tests on N ranks under braidrun
#   memlock       the verbs plugin with too little locked memory: a clear error, no crash
#   multiproc:N   the multi-process collective suite on N ranks under braidrun, without the
#                 tests MP_FILTER names below
#   pair-transport:PORT, pair-multiproc:PORT   one rank per guest of a pair (rank = RXE_NODE),
#                 started through the environment contract with the bootstrap on node 0's
#                 address, 192.0.2.1:PORT
set -u
: "${BRAID_BIN:?BRAID_BIN must name the bin directory of the build}"
SUITE_LIMIT=${BRAID_RXE_SUITE_LIMIT:-600}
# Under TCG every byte is emulated: the sweeps over every dtype, op and root of the rest of the
# set run on the host (every multiproc variant); here the communicator, unique-id, thread,
# non-blocking and uneven (v-variant) cases of it run over the device, besides the suite of
# allreduce and broadcast (its sweep over every dtype in segments is the host's too: over the
# device Pipeline.AllreduceManySegmentsOddCount takes those paths). The node path is off here
# (BRAID_INTRANODE=off), so its tests of rank-order folds by single copy (allreduce, reduce to
# every root, reduce-scatter) would only repeat other calls: reduce and reduce-scatter over the
# device stay in Collectives.ReduceLarge, BlocksSpanningSeveralNodeWindows and the
# communicator tests. The exactness sweep over every dtype and op around each switch point of
# the selection is the host's too (8 s a run here): over the device the transport suite crosses
# the plugin's eager and rendezvous edges, and the other allreduce tests (in and out of place,
# random floats, many segments: 24 B to 5.6 MB) every algorithm the selection takes there.
MP_FILTER='--gtest_filter=-Large.*:Timeout.*:SingleCopy.*RankOrderBits'\
':Pipeline.AllreduceEveryDtypeOverSegments:Allreduce.EveryDtypeAndOpIsExactAroundEverySwitchPoint'\
':Collectives.ReduceEveryDtypeOpAndRoot:Collectives.ReduceScatterEveryDtypeAndOp'\
':Collectives.GatherAndScatterEveryRoot:Collectives.AlltoallEveryDtype'\
':Collectives.AllgatherEveryDtype:Collectives.ReduceAndReduceScatterWithIntegerOpsAndAverage'\
':Allreduce.AverageOnEveryDtype:Allreduce.BitwiseAndLogical*:Allreduce.SixteenBit*'\
':Comm.CreateAndFreeInALoop'
passed=() failed=()

run_suite() {   # run_suite NAME
  local name=$1 kind=${1%%:*} arg=${1#*:} start=$SECONDS rc=0 cmd
  case $kind in
    transport) cmd=("$BRAID_BIN/braidrun" -n "$arg" --timeout 300 --tag-output "$BRAID_BIN/braid_transport_tests") ;;
    multiproc) cmd=("$BRAID_BIN/braidrun" -n "$arg" --timeout 300 --tag-output "$BRAID_BIN/braid_multiproc_tests" "$MP_FILTER") ;;
    pair-transport|pair-multiproc)
      # The environment contract by hand: what a launcher would give each rank.
      cmd=(env BRAID_RANK="$RXE_NODE" BRAID_SIZE=2 BRAID_BOOTSTRAP="192.0.2.1:$arg"
               BRAID_JOB_KEY="rxe-pair-${RXE_PAIR_ID:-x}-$arg" BRAID_TIMEOUT=300)
      if [[ $kind == pair-transport ]]; then cmd+=("$BRAID_BIN/braid_transport_tests")
      else cmd+=("$BRAID_BIN/braid_multiproc_tests" "$MP_FILTER"); fi ;;
    memlock) cmd=("$(dirname "${BASH_SOURCE[0]}")/memlock_check.sh" "$BRAID_BIN") ;;
    *) echo "guest-suites.sh: unknown suite '$name'" >&2; return 2 ;;
  esac
  echo "==== suite $name: BRAID_TRANSPORT=${BRAID_TRANSPORT:-} BRAID_VERBS_RECV_QUEUES=${BRAID_VERBS_RECV_QUEUES:-} UCX_TLS=${UCX_TLS:-}"
  timeout -k 10 "$SUITE_LIMIT" "${cmd[@]}" || rc=$?
  (( rc == 124 )) && echo "suite $name: killed after ${SUITE_LIMIT}s"
  if (( rc == 0 )); then passed+=("$name"); echo "RESULT $name: PASS ($(( SECONDS - start ))s)"
  else failed+=("$name"); echo "RESULT $name: FAIL, exit $rc ($(( SECONDS - start ))s)"; fi
}

for s in "$@"; do run_suite "$s"; done
echo "SUITES passed: ${passed[*]:-none}; failed: ${failed[*]:-none}"
(( ${#failed[@]} == 0 ))
