#!/usr/bin/env bash
# One launch test (see CMakeLists.txt): run_case.sh CASE. Needs BRAID_BIN (the build's bin
# directory). Exit 0 pass, 1 fail, 77 skipped (Slurm or Open MPI unavailable, outside CI).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
: "${BRAID_BIN:?BRAID_BIN must name the bin directory of the build}"
PROBE=$BRAID_BIN/launch_probe
SUITE=$BRAID_BIN/braid_multiproc_tests
AGENT=$LAUNCH_DIR/netns-agent
work=$(mktemp -d "${TMPDIR:-/tmp}/braid-launch.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"  # srun runs the ranks in the caller's directory; it must exist on every node

# The probe (with braid's info log, for local ranks and the bootstrap time), then the suite.
probe_and_suite() {  # NAME RANKS command-prefix...
  local name=$1 n=$2 rc=0
  shift 2
  BRAID_DEBUG=info run 120 probe.log "$@" "$PROBE" || rc=$?
  expect_success "$rc" probe.log "launch_probe under $name"
  check_probe probe.log "$n"
  echo "RESULT $name: $n ranks, bootstrap $(bootstrap_ms probe.log) ms (slowest rank)"
  run 300 suite.log "$@" "$SUITE" "${SUITE_ARGS[@]}" || rc=$?
  expect_success "$rc" suite.log "the multi-process suite under $name"
  expect_line suite.log '\[  PASSED  \] [0-9]+ tests' "the multi-process suite under $name"
  grep -E '\[  PASSED  \]' suite.log
}

srun_args() { echo --mpi=pmix --kill-on-bad-exit=1 --time=5 "$@"; }

case ${1:?case} in
  cluster.start)
    ensure_packages slurm-wlm
    exec 9>"$BRAID_SLURM_DIR.lock"
    timeout 120 flock 9 || fail "timed out waiting for $BRAID_SLURM_DIR.lock"
    mkdir -p "$BRAID_SLURM_DIR"
    # 9>&-: the daemons must not inherit the lock, or they would hold it for their lifetime.
    "$LAUNCH_DIR/cluster/start-cluster" --nodes 2 >start.log 2>&1 9>&- ||
      { show start.log; skip_or_fail "the test Slurm cluster could not start (see above)"; }
    cat start.log
    # ctest (our parent) is a user of the cluster until launch.cluster.stop says otherwise.
    mkdir -p "$BRAID_SLURM_DIR/users" && touch "$BRAID_SLURM_DIR/users/$PPID"
    (cd / && timeout 30 srun -N 2 -n 2 hostname) || fail "srun -N 2 hostname failed"
    ;;

  cluster.stop)
    [[ -d $BRAID_SLURM_DIR/users ]] || exit 0
    exec 9>"$BRAID_SLURM_DIR.lock"
    timeout 120 flock 9 || fail "timed out waiting for $BRAID_SLURM_DIR.lock"
    rm -f "$BRAID_SLURM_DIR/users/$PPID"
    # Another test run (another build directory) may still be using the cluster.
    for user in "$BRAID_SLURM_DIR"/users/*; do
      [[ -e $user ]] && ! kill -0 "$(basename "$user")" 2>/dev/null && rm -f "$user"
    done
    if compgen -G "$BRAID_SLURM_DIR/users/*" >/dev/null; then
      echo "cluster left running for: $(ls "$BRAID_SLURM_DIR/users")"
    else
      "$LAUNCH_DIR/cluster/stop-cluster" 9>&-
    fi
    ;;

  srun.1node.2tasks | srun.1node.4tasks)
    need_cluster
    n=${1#srun.1node.}; n=${n%tasks}
    # Both "nodes" advertise the machine's cores; --overcommit lets 4 tasks share 2.
    probe_and_suite "srun -N 1 -n $n" "$n" srun $(srun_args -N 1 -n "$n" --overcommit)
    ;;

  srun.mpi_interpose.*)
    # An unmodified Open MPI program (C, or Fortran: .fortran.) under srun --mpi=pmix with
    # braid's MPI library preloaded (tests/mpi/run_mpi_test.sh: results as MPI's own, every call
    # braid should take taken), on one node or across two, on 2 ranks or as many as the name says.
    need_cluster
    lib=$BRAID_BIN/../lib/libbraid-mpi-openmpi.so
    prog=$BRAID_BIN/mpi_collectives_openmpi
    [[ $1 == *.fortran.* ]] && prog=$BRAID_BIN/../tests/mpi/mpi_fortran_openmpi
    [[ -f $lib && -x $prog ]] || skip_or_fail "libbraid-mpi-openmpi.so or $prog not built"
    nodes=(-N 1) && [[ $1 == *2nodes* ]] && nodes=(-N 2)
    np=2 && [[ $1 =~ \.([0-9]+)ranks$ ]] && np=${BASH_REMATCH[1]}
    bash "$LAUNCH_DIR/../mpi/run_mpi_test.sh" srun "$np" "$lib" "$prog" "${nodes[@]}" ||
      fail "MPI library under srun ${nodes[*]} -n $np ($prog)"
    ;;

  srun.2nodes.4tasks)
    need_cluster
    # As for braidrun across the namespaces: TCP between the "nodes", as on a real cluster.
    export UCX_TLS=tcp,self
    probe_and_suite "srun -N 2 -n 4" 4 srun $(srun_args -N 2 -n 4)
    grep -q 'launch_probe: rank 3 of 4 on nodeB' probe.log || fail "rank 3 did not run on nodeB"
    ;;

  mpirun.3ranks)
    command -v mpirun.openmpi >/dev/null || ensure_packages openmpi-bin
    probe_and_suite "mpirun -np 3" 3 mpirun.openmpi --oversubscribe -np 3
    # The launch matrix reports every launcher at 4 ranks.
    BRAID_DEBUG=info run 120 probe4.log mpirun.openmpi --oversubscribe -np 4 "$PROBE" || rc=$?
    expect_success "${rc:-0}" probe4.log "launch_probe under mpirun -np 4"
    check_probe probe4.log 4
    echo "RESULT mpirun -np 4: 4 ranks, bootstrap $(bootstrap_ms probe4.log) ms (slowest rank)"
    ;;

  braidrun.2hosts.4ranks)
    need_cluster
    # The namespaces share one kernel, so UCX would pick shared memory between the "hosts";
    # tcp,self makes them talk over the network as separate machines would.
    export UCX_TLS=tcp,self
    probe_and_suite "braidrun --host nodeA:2,nodeB:2" 4 \
      "$BRAID_BIN/braidrun" --host nodeA:2,nodeB:2 --launch-agent "$AGENT" --tag-output
    grep -q 'launch_probe: rank 2 of 4 on nodeB' probe.log || fail "rank 2 did not run on nodeB"
    printf 'nodeA slots=1  # comment\n\nnodeB slots=3\n' >hosts
    UCX_LOG_LEVEL=info BRAID_DEBUG=info run 120 hostfile.log \
      "$BRAID_BIN/braidrun" --hostfile hosts --launch-agent "$AGENT" --tag-output "$PROBE" || rc=$?
    expect_success "${rc:-0}" hostfile.log "braidrun --hostfile"
    check_probe hostfile.log 4
    grep -q 'launch_probe: rank 1 of 4 on nodeB' hostfile.log || fail "hostfile order not kept"
    # UCX endpoints between the hosts run over TCP, never shared memory.
    expect_line hostfile.log 'ep_cfg.*tag\(tcp/eth0' "UCX over TCP between hosts"
    ! grep -E 'ep_cfg.*(sysv|cma|posix|xpmem|knem)' hostfile.log || fail "UCX used shared memory"
    echo "hostfile placement and UCX over TCP checked"
    ;;

  braidrun.agent.4ranks)
    # The path of a job across hosts (agent, forwarded environment, rendezvous service), with
    # hosts that are all this machine: runs wherever the tests run, Slurm or not.
    probe_and_suite "braidrun --host hostA:2,hostB:2 (local agent)" 4 \
      "$BRAID_BIN/braidrun" --host hostA:2,hostB:2 --launch-agent "$LAUNCH_DIR/local-agent" \
      --tag-output
    expect_line probe.log 'says rank 0 listens at' "the rendezvous lookup"
    ;;

  errors.partial_environment)
    rc=0
    run 30 partial.log env -u BRAID_RANK -u PMIX_NAMESPACE BRAID_SIZE=4 "$PROBE" || rc=$?
    [[ $rc -ne 0 ]] || { show partial.log; fail "a partial environment was accepted"; }
    expect_line partial.log 'no bootstrap source: not started by braidrun, mpirun or srun, and BRAID_RANK is unset \(incomplete job environment: BRAID_RANK is unset while BRAID_SIZE is set\)' "partial environment"
    cat partial.log
    ;;

  errors.pmix_init)
    # PMIx variables without a PMIx server behind them: PMIx_Init fails, and says so.
    rc=0
    PMIX_NAMESPACE=braid-test PMIX_RANK=0 BRAID_TIMEOUT=5 run 30 init.log "$PROBE" || rc=$?
    pmix_missing init.log
    [[ $rc -ne 0 ]] || { show init.log; fail "PMIx_Init succeeded without a server"; }
    expect_line init.log 'braid_init failed: PMIx_Init failed: .* while connecting to the PMIx server \(started by the launcher that set PMIX_NAMESPACE=braid-test\)' "PMIx_Init's failure"
    cat init.log
    ;;

  errors.srun_without_pmix)
    need_cluster
    rc=0
    run 60 nopmix.log srun --mpi=none --time=2 -N 1 -n 2 --overcommit "$PROBE" || rc=$?
    [[ $rc -ne 0 ]] || { show nopmix.log; fail "ranks ran without a bootstrap source"; }
    expect_line nopmix.log 'no bootstrap source: not started by braidrun, mpirun or srun, and BRAID_RANK is unset, yet SLURM_STEP_NUM_TASKS=2: srun started it without PMIx; use srun --mpi=pmix' "srun without PMIx"
    grep -m1 'no bootstrap source' nopmix.log
    rc=0
    BRAID_SIZE=2 run 60 partial.log srun $(srun_args -N 1 -n 2 --overcommit) "$PROBE" || rc=$?
    pmix_missing partial.log
    [[ $rc -ne 0 ]] || { show partial.log; fail "a partial environment was accepted under srun"; }
    expect_line partial.log 'incomplete job environment: BRAID_RANK is unset while BRAID_SIZE is set \(started by srun through PMIx' "partial environment under srun"
    grep -m1 'incomplete job environment' partial.log
    ;;

  errors.unreachable_rank0)
    need_cluster
    # srun: rank 0 on nodeA publishes only its loopback address, which nodeB cannot reach.
    rc=0 start=$SECONDS
    BRAID_SOCKET_IFNAME=lo BRAID_TIMEOUT=3 BRAID_DEBUG=info \
      run 60 srun.log srun $(srun_args -N 2 -n 2) "$PROBE" || rc=$?
    pmix_missing srun.log
    [[ $rc -ne 0 ]] || { show srun.log; fail "the job formed although rank 0 was unreachable"; }
    expect_line srun.log 'chosen by BRAID_SOCKET_IFNAME=lo' "rank 0's logged choice"
    # Both ranks wait 3 s and srun --kill-on-bad-exit stops the other once one gives up, so the
    # first one's error is certain, the second one's is not.
    expect_line srun.log 'rank 1: could not reach rank 0 at (any of its addresses \()?127\.0\.0\.1:[0-9]+.* after 3 s: .*Connection refused|rank 0: timed out after 3 s waiting for rank 1 to connect to 127\.0\.0\.1:[0-9]+' "the first rank's error"
    (( SECONDS - start < 30 )) || fail "the failure took $((SECONDS - start)) s"
    grep -E 'could not reach|timed out after' srun.log
    # braidrun: excluding eth* leaves braidrun its bridge address, but rank 0 on nodeA only
    # loopback (the automatic fallback), so rank 1 on nodeB cannot reach it.
    rc=0
    BRAID_SOCKET_IFNAME='^eth' BRAID_TIMEOUT=3 BRAID_DEBUG=info UCX_TLS=tcp,self \
      run 60 braidrun.log "$BRAID_BIN/braidrun" --host nodeA:1,nodeB:1 --launch-agent "$AGENT" \
      --tag-output "$PROBE" || rc=$?
    [[ $rc -ne 0 ]] || { show braidrun.log; fail "the job formed although rank 0 was unreachable"; }
    expect_line braidrun.log 'only ranks on this host can connect' "rank 0's loopback fallback"
    # Both ranks wait 3 s; whichever gives up first ends the job (braidrun then stops the other),
    # so either rank's error is the one that names the unreachable address.
    expect_line braidrun.log 'rank 1: could not reach rank 0 at (any of its addresses \()?127\.0\.0\.1:[0-9]+.* after 3 s|rank 0: timed out after 3 s waiting for rank 1 to connect to 127\.0\.0\.1:[0-9]+' "the first rank's error"
    expect_line braidrun.log 'braidrun: rank [01] \(pid [0-9]+, node[AB] via netns-agent\) exited with code 1' "braidrun's report"
    grep -E 'could not reach|braidrun: rank' braidrun.log
    ;;

  errors.pmix_fence)
    need_cluster
    # Rank 1 never joins: rank 0 waits in PMIx_Fence until BRAID_TIMEOUT, then says so (the
    # server's timeout, or braid's own 2 s later when the server lets the fence run on).
    rc=0 start=$SECONDS
    BRAID_TIMEOUT=3 run 60 fence.log srun $(srun_args -N 1 -n 2 --overcommit) \
      "$PROBE" --skip-init-rank 1 || rc=$?
    pmix_missing fence.log
    [[ $rc -ne 0 ]] || { show fence.log; fail "rank 0 formed a job without rank 1"; }
    expect_line fence.log 'braid_init failed: PMIx_Fence failed: (.*TIMEOUT|.*[Tt]imeout|no answer within 3 s)' "rank 0's error"
    # The probe's rank 1 sleeps 6 s and exits; srun ends the step once rank 0 has failed.
    (( SECONDS - start < 30 )) || fail "the failure took $((SECONDS - start)) s"
    grep -m1 'PMIx_Fence failed' fence.log
    ;;

  errors.rank0_no_address)
    need_cluster
    # Rank 0 cannot choose an address to publish: the others learn why through PMIx at once,
    # instead of waiting out BRAID_TIMEOUT in the fence. No --kill-on-bad-exit, so that srun
    # does not stop rank 1 before it has said so.
    rc=0 start=$SECONDS
    BRAID_SOCKET_IFNAME=nosuchif0 BRAID_TIMEOUT=30 run 60 noaddr.log \
      srun --mpi=pmix --time=2 -N 1 -n 2 --overcommit "$PROBE" || rc=$?
    pmix_missing noaddr.log
    [[ $rc -ne 0 ]] || { show noaddr.log; fail "the job formed without rank 0's address"; }
    expect_line noaddr.log "braid_init failed: rank 0: no address to publish for the bootstrap: BRAID_SOCKET_IFNAME=nosuchif0 matches no interface" "rank 0's error"
    expect_line noaddr.log "braid_init failed: rank 1: rank 0 failed before it could publish its bootstrap address \\(rank 0: no address to publish for the bootstrap: BRAID_SOCKET_IFNAME=nosuchif0 matches no interface.*\\)" "rank 1's error"
    (( SECONDS - start < 20 )) || fail "the failure took $((SECONDS - start)) s (BRAID_TIMEOUT=30)"
    grep 'braid_init failed' noaddr.log
    ;;

  *)
    fail "unknown case $1"
    ;;
esac
