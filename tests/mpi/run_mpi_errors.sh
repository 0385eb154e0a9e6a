#!/usr/bin/env bash
# A braid failure inside a taken call reaches the communicator's MPI error handler
# (mpi_collectives.c, MPI_TEST_ERRORS): with MPI_ERRORS_RETURN every rank gets an error code and
# goes on; with MPI_ERRORS_ARE_FATAL the job aborts with braid's message. Only with the library
# (the program is erroneous for MPI itself: its ranks' counts differ).
#   run_mpi_errors.sh openmpi|mpich NP LIBRARY PROGRAM
set -euo pipefail
flavor=$1 np=$2 lib=$3 prog=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() {  # run MODE: exit status of the job
  if [[ $flavor == openmpi ]]; then
    timeout 120 mpirun.openmpi -np "$np" --oversubscribe --bind-to none --mca btl self,vader,tcp \
      --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo -x LD_PRELOAD="$lib" \
      -x MPI_TEST_ERRORS="$1" "$prog" >"$work/$1.out" 2>"$work/$1.err"
  else
    timeout 120 mpirun.mpich -np "$np" -iface lo -genv LD_PRELOAD "$lib" \
      -genv MPI_TEST_ERRORS "$1" "$prog" >"$work/$1.out" 2>"$work/$1.err"
  fi
}
status=0
if ! run return; then
  echo "FAIL: MPI_ERRORS_RETURN: the job failed"; cat "$work/return.out" "$work/return.err"; status=1
elif [[ $(grep -c '^ERRORS_RETURN rank' "$work/return.out") != "$np" ]]; then
  echo "FAIL: MPI_ERRORS_RETURN: not every rank got its error and went on"
  cat "$work/return.out" "$work/return.err"; status=1
else
  grep '^ERRORS_RETURN rank' "$work/return.out"
  grep -m1 'failed in braid' "$work/return.err" || { echo "FAIL: braid's message missing"; status=1; }
fi
rc=0
run fatal || rc=$?
if [[ $rc == 0 || $rc == 124 ]]; then
  echo "FAIL: MPI_ERRORS_ARE_FATAL: the job exited $rc, not aborted"; cat "$work/fatal.err"; status=1
elif ! grep -q 'MPI_Allreduce failed in braid (ranks disagree about the collective.s arguments)' "$work/fatal.err"; then
  echo "FAIL: MPI_ERRORS_ARE_FATAL: braid's message missing"; cat "$work/fatal.err"; status=1
else
  echo "fatal: exit $rc; $(grep -m1 'failed in braid' "$work/fatal.err")"
fi
[[ $status == 0 ]] && echo "PASS: both error handlers"
exit $status
