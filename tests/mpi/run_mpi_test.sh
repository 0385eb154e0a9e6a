#!/usr/bin/env bash
# Runs an MPI test program twice under one MPI's launcher: with BRAID_MPI=off (everything in
# MPI) and with the interposition library preloaded and BRAID_MPI_REPORT=1. Passes when both
# runs succeed, their DIGEST lines (every rank's results) are identical, and the library's
# report line says braid took exactly the calls the program expects it to (every rank's EXPECT
# lines, summed) out of all it made.
#   run_mpi_test.sh openmpi|mpich|srun NP LIBRARY|linked PROGRAM [srun options...]
# "linked": the program was linked with the library ahead of the MPI library; nothing is
# preloaded.
# srun: an Open MPI program started by Slurm's srun --mpi=pmix (tests/launch starts the
# cluster; the extra options say where, e.g. -N 2). MPI_TEST_EXTRA="K=V ..." adds variables to
# both runs (e.g. MPI_TEST_THREAD_LEVEL=multiple).
# The run with braid has BRAID_DEBUG=info: every pass-through reason must be logged once per
# rank, and the report must still be the only line that starts with "braid-mpi:".
set -euo pipefail
flavor=$1 np=$2 lib=$3 prog=$4
shift 4
srun_options=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() {  # run NAME KEY=VALUE...: the program under the MPI's launcher with these variables
  local name=$1
  shift
  # Every rank's DIGEST and EXPECT lines go to a file of its own (see mpi_collectives.c).
  mkdir "$work/$name.d"
  set -- "$@" MPI_TEST_OUT="$work/$name.d"
  local args=()
  if [[ $flavor == srun ]]; then
    local exports=ALL
    for kv in "$@"; do exports+=",$kv"; done
    srun --mpi=pmix --kill-on-bad-exit=1 --time=5 --overcommit -n "$np" "${srun_options[@]}" \
      --export="$exports" "$prog" >"$work/$name.out" 2>"$work/$name.err"
  elif [[ $flavor == openmpi ]]; then
    for kv in "$@"; do args+=(-x "$kv"); done
    mpirun.openmpi -np "$np" --oversubscribe --bind-to none --mca btl self,vader,tcp \
      --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo "${args[@]}" "$prog" \
      >"$work/$name.out" 2>"$work/$name.err"
  else
    for kv in "$@"; do args+=(-genv "${kv%%=*}" "${kv#*=}"); done
    mpirun.mpich -np "$np" -iface lo "${args[@]}" "$prog" >"$work/$name.out" 2>"$work/$name.err"
  fi
}
read -r -a extra <<<"${MPI_TEST_EXTRA:-}"
[[ $lib == linked ]] || extra+=(LD_PRELOAD="$lib")
if ! run off BRAID_MPI=off BRAID_MPI_REPORT=1 "${extra[@]}"; then
  echo "FAIL: the run with BRAID_MPI=off failed"; cat "$work/off.err"; exit 1
fi
if ! run on BRAID_MPI_REPORT=1 BRAID_DEBUG=info "${extra[@]}"; then
  echo "FAIL: the run with braid failed"; cat "$work/on.err"; exit 1
fi
for name in off on; do
  cat "$work/$name.out" "$work/$name.d"/rank* >"$work/$name.lines"
  grep '^DIGEST' "$work/$name.lines" | sort >"$work/$name.digest" || true
done
if [[ ! -s $work/on.digest ]]; then echo "FAIL: no results printed"; exit 1; fi
if ! diff -q "$work/off.digest" "$work/on.digest" >/dev/null; then
  echo "FAIL: results differ from MPI's own ($(diff "$work/off.digest" "$work/on.digest" | grep -c '^[<>]') lines)"
  diff "$work/off.digest" "$work/on.digest" | head -20
  exit 1
fi
report=$(grep '^braid-mpi:' "$work/on.err" || true)
off_report=$(grep '^braid-mpi:' "$work/off.err" || true)
echo "with braid:    $report"
echo "BRAID_MPI=off: $off_report"
[[ $(grep -c '^braid-mpi:' "$work/on.err") == 1 ]] || { echo "FAIL: not exactly one report line"; cat "$work/on.err"; exit 1; }
status=0
# Every rank's EXPECT lines, summed per collective over the ranks.
while read -r name taken total; do
  want="$name=$taken/$total"
  want_off="$name=0/$total"
  [[ " ${report#braid-mpi:} " == *" $want "* ]] || { echo "FAIL: expected $want in the report"; status=1; }
  [[ " ${off_report#braid-mpi:} " == *" $want_off "* ]] || { echo "FAIL: expected $want_off with BRAID_MPI=off"; status=1; }
done < <(awk '/^EXPECT/ { t[$3] += $4; n[$3] += $5 } END { for (c in t) print c, t[c], n[c] }' "$work/on.lines")
[[ $(grep -c '^EXPECT' "$work/on.lines") -gt 0 ]] || { echo "FAIL: the program printed no EXPECT lines"; status=1; }
# Pass-through reasons: logged once per (rank, collective, reason), and every one the program
# says it provokes (its REASON lines: rank, collective, the reason's first words) is there.
infos=$(grep -a 'braid-mpi info: ' "$work/on.err" || true)
dups=$(sort <<<"$infos" | uniq -d)
[[ -z $dups ]] || { echo "FAIL: a pass-through reason logged twice:"; echo "$dups"; status=1; }
[[ $(grep -c '^REASON' "$work/on.lines") -gt 0 ]] || { echo "FAIL: the program printed no REASON lines"; status=1; }
while read -r _ r coll reason; do
  [[ $(grep -cF "[rank $r] braid-mpi info: $coll passed to MPI: $reason" <<<"$infos") == 1 ]] ||
    { echo "FAIL: rank $r did not log '$coll passed to MPI: $reason' once"; status=1; }
done < <(grep '^REASON' "$work/on.lines" | sort -u)
[[ $status == 0 ]] && echo "PASS: $(wc -l <"$work/on.digest") identical results, report as expected"
exit $status
