#!/usr/bin/env bash
# shellcheck disable=SC2054  # commas in the values below are not array separators
# Performance figures on soft-RoCE, from ONE guest run (tests/vm/run-in-guest): p2p latency and
# bandwidth of every braid transport plugin over rxe0 (bench/micro's braid-micro-p2p: the verbs
# plugin when it is built, UCX restricted to rxe0), next to perftest's ib_send_lat and
# ib_write_bw on the same device; allreduce and broadcast sweeps (braid-bench, 8 B-16 MiB, 2
# ranks, the node path off so the transport carries them) over each plugin side by side,
# medians of PERF_ROUNDS (3) alternating runs and the ratio within each round; then
# the registered receive memory per process of the verbs plugin in per-peer and shared mode as
# the rank count grows (its counters, as BRAID_DEBUG=info prints them at finalize).
# With --pair: two guests joined by a link (tests/vm/run-in-guest-pair), one rank in each:
# perftest across the link, then the same collective sweeps.
# Figures only, no pass/fail; the guests are TCG-emulated, so they compare plugins with each
# other and with perftest, not with real hardware.
#   tests/rxe/perf-in-guest.sh [--pair] [BUILD_DIR]   (as root; BUILD_DIR defaults to ./build)
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
PAIR=0
[[ ${1:-} == --pair ]] && { PAIR=1; shift; }
BUILD=$(cd "${1:-build}" && pwd -P) || { echo "no build directory ${1:-build}" >&2; exit 2; }
if [[ -z ${RXE_VM:-} ]]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/braid-rxe-perf.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  cd "$work" || exit 1
  if (( PAIR )); then
    # About 6 minutes a round on a slow link (perftest's 8 B at 360 µs): 5 rounds took longer
    # than a flat 30 minutes.
    "$HERE/../vm/run-in-guest-pair" --timeout $(( 600 + 420 * ${PERF_ROUNDS:-3} )) --grace 120 \
      -- "$HERE/perf-in-guest.sh" --pair "$BUILD"
  else
    "$HERE/../vm/run-in-guest" --timeout $(( 1200 + 300 * ${PERF_ROUNDS:-3} )) \
      -- "$HERE/perf-in-guest.sh" "$BUILD"
  fi
  exit
fi

BIN=$BUILD/bin
D=$RXE_DEV G=$RXE_GID_INDEX
UCX_RXE=(UCX_TLS=rc_verbs,ud_verbs,self UCX_NET_DEVICES=rxe0:1)
section() { printf '\n==== %s\n' "$*"; }
plugins=(ucx)
[[ -e $BUILD/lib/libbraid-transport-verbs.so ]] && plugins=(verbs ucx)

# side_by_side A.csv B.csv NAME_A NAME_B: braid-bench --csv rows of two runs, one line per
# size: each run's algorithm and average latency, and their ratio.
side_by_side() {
  awk -F, -v a="$3" -v b="$4" '
    FNR == 1 { next }
    NR == FNR { us[$1] = $4; alg[$1] = $3; next }
    $1 in us {
      if (!header++)
        printf "%10s  %-26s %10s  %-26s %10s  %s\n", "bytes", a, "avg_us", b, "avg_us", a "/" b
      printf "%10s  %-26s %10.1f  %-26s %10.1f  %.2f\n", $1, alg[$1], us[$1], $3, $4, us[$1] / $4
    }' "$1" "$2"
}
# AWK_SORTED_MEDIAN: an awk function for the awk programs below: sorts x[1..k] (numbers) in
# place and returns their median.
AWK_SORTED_MEDIAN='
  function sorted_median(x, k,    a, b, t) {
    for (a = 2; a <= k; ++a) for (b = a; b > 1 && x[b] + 0 < x[b - 1] + 0; --b) {
      t = x[b]; x[b] = x[b - 1]; x[b - 1] = t
    }
    return (k % 2) ? x[(k + 1) / 2] : (x[k / 2] + x[k / 2 + 1]) / 2
  }'
# median_csv FILE...: braid-bench --csv rows of several runs of one sweep, one row per size:
# the first run's row with the median of the runs' average latency (column 4) in its place,
# and the lowest and highest of the runs appended (TCG guests are noisy; one run is not a
# figure). The other columns are the first run's.
median_csv() {
  awk -F, -v OFS=, "$AWK_SORTED_MEDIAN"'
    FNR == 1 { if (NR == 1) print $0 ",runs_min_us,runs_max_us"; next }
    { if (!($1 in row)) { row[$1] = $0; order[++n] = $1 }; v[$1] = v[$1] " " $4 }
    END {
      for (i = 1; i <= n; ++i) {
        k = split(substr(v[order[i]], 2), x, " ")
        med = sorted_median(x, k)
        split(row[order[i]], f, ",")
        f[4] = med
        line = f[1]
        for (c = 2; c in f; ++c) line = line "," f[c]
        print line, x[1], x[k]
      }
    }' "$@"
}
# round_ratios COLL ROUNDS: per size, verbs' latency over UCX's in each round (the two runs of a
# round are next to each other), their median, and in how many rounds verbs was the faster.
# Across the pair the link's latency drifts by 30% over minutes, more than the plugins differ:
# a ratio taken within a round cancels the drift that the medians of each plugin keep.
round_ratios() {
  local r files=()
  for (( r = 1; r <= $2; ++r )); do
    [[ -s /tmp/bench.$1.verbs.$r.csv && -s /tmp/bench.$1.ucx.$r.csv ]] || continue
    files+=("/tmp/bench.$1.verbs.$r.csv" "/tmp/bench.$1.ucx.$r.csv")
  done
  (( ${#files[@]} )) || return 0
  awk -F, "$AWK_SORTED_MEDIAN"'
    FNR == 1 { ++file; next }
    file % 2 == 1 { v[$1] = $4; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 }; next }
    ($1 in v) && $4 > 0 { k = ++cnt[$1]; q[$1, k] = v[$1] / $4; ahead[$1] += (v[$1] < $4) }
    END {
      printf "%10s  %-22s %s\n", "bytes", "verbs/ucx per round", "median  verbs ahead"
      for (i = 1; i <= n; ++i) {
        s = order[i]; k = cnt[s]
        if (!k) continue
        line = ""
        for (a = 1; a <= k; ++a) { x[a] = q[s, a]; line = line sprintf(" %.2f", x[a]) }
        med = sorted_median(x, k)
        printf "%10s %-23s %6.2f  %d of %d\n", s, line, med, ahead[s], k
      }
    }' "${files[@]}"
}
# collectives RUN...: allreduce and broadcast, 8 B-16 MiB, over each plugin, run by RUN
# (which appends the braid-bench arguments), PERF_ROUNDS times (default 3) with the plugins
# alternating and their order swapped every round (verbs ucx, ucx verbs, ...), so that a slow
# spell of the guest falls on both and a drift favours neither; then the side-by-side tables of
# the medians and the per-round ratios (rank 0 writes them).
collectives() {
  local coll p csv round rounds=${PERF_ROUNDS:-3}
  for coll in allreduce broadcast; do
    for (( round = 1; round <= rounds; ++round )); do
      local order=("${plugins[@]}")
      (( round % 2 == 0 && ${#plugins[@]} == 2 )) && order=("${plugins[1]}" "${plugins[0]}")
      for p in "${order[@]}"; do
        csv=/tmp/bench.$coll.$p.$round.csv
        rm -f "$csv"
        "$@" "$BIN/braid-bench" "$coll" --transport "$p" --max-bytes 16M --csv "$csv" \
          >/dev/null 2>/tmp/bench.err || { echo "braid-bench $coll over $p failed:"; tail -5 /tmp/bench.err; }
      done
    done
    for p in "${plugins[@]}"; do
      rm -f "/tmp/bench.$coll.$p.csv"
      local runs=()
      for (( round = 1; round <= rounds; ++round )); do
        [[ -s /tmp/bench.$coll.$p.$round.csv ]] && runs+=("/tmp/bench.$coll.$p.$round.csv")
      done
      (( ${#runs[@]} )) && median_csv "${runs[@]}" > "/tmp/bench.$coll.$p.csv"
    done
    if [[ ${#plugins[@]} == 2 && -s /tmp/bench.$coll.verbs.csv && -s /tmp/bench.$coll.ucx.csv ]]; then
      echo "-- $coll (medians of $rounds runs)"
      side_by_side "/tmp/bench.$coll.verbs.csv" "/tmp/bench.$coll.ucx.csv" verbs ucx
      echo "   spread (min-max us): verbs / ucx"
      paste -d, "/tmp/bench.$coll.verbs.csv" "/tmp/bench.$coll.ucx.csv" | awk -F, '
        NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "runs_min_us") c[++m] = i; next }
        { printf "%10s  %8.1f-%-8.1f / %8.1f-%-8.1f\n", $1, $c[1], $(c[1] + 1), $c[2], $(c[2] + 1) }'
      echo "   per round (each ratio from two runs next to each other):"
      round_ratios "$coll" "$rounds"
    elif [[ -s /tmp/bench.$coll.ucx.csv ]]; then
      echo "-- $coll over ucx (medians of $rounds runs)"; column -t -s, "/tmp/bench.$coll.ucx.csv"
    fi
  done
}
BENCH_ENV=("${UCX_RXE[@]}" BRAID_VERBS_DEVICE=rxe0:1 BRAID_INTRANODE=off)

if (( PAIR )); then
  # One rank in each guest, started by hand through the environment contract (as
  # guest-suites.sh's pair suites are); node 0 prints the tables.
  section "perftest from node 1 to node 0 across the link (GID index $G)"
  perf_across() {   # perf_across TOOL "ARGS": the server on node 0, the client on node 1
    if [[ $RXE_NODE == 0 ]]; then
      # shellcheck disable=SC2086  # ARGS is split on purpose
      timeout 120 "$1" -d "$D" -x "$G" $2 -F >/dev/null 2>&1
    else
      sleep 2
      # shellcheck disable=SC2086
      timeout 120 "$1" -d "$D" -x "$G" $2 -F "$RXE_PEER_IP" 2>&1 |
        grep -E '^ *#bytes|^ *[0-9]+ +[0-9]+ ' | sed "s/^/$1 | /"
    fi
  }
  perf_across ib_send_lat "-s 8 -n 5000"
  perf_across ib_send_lat "-s 4096 -n 1000"
  perf_across ib_write_bw "-s 65536 -n 2000"
  perf_across ib_write_bw "-s 1048576 -n 200"
  section "collectives across the link, one rank per guest: ${plugins[*]} (braid-bench, osu mode)"
  port=29700
  # shellcheck disable=SC2317  # called through collectives
  pair_rank() {   # the next run's environment contract (a port of its own)
    port=$(( port + 1 ))
    env "${BENCH_ENV[@]}" BRAID_RANK="$RXE_NODE" BRAID_SIZE=2 BRAID_BOOTSTRAP="192.0.2.1:$port" \
      BRAID_JOB_KEY="rxe-perf-${RXE_PAIR_ID:-x}-$port" BRAID_TIMEOUT=300 timeout 900 "$@"
  }
  collectives pair_rank
  exit 0
fi

section "perftest on $D (server and client in this guest, GID index $G)"
# perftest's latency tests now and then report "inf" for every figure (a client that started
# timing before its server was ready): such a run is repeated, up to three times.
perf_pair() {   # perf_pair "ARGS": server, then the client on 127.0.0.1 (the OOB exchange)
  local try out
  for try in 1 2 3; do
    # shellcheck disable=SC2086  # ARGS is split on purpose
    timeout 120 "$1" -d "$D" -x "$G" $2 -F >/dev/null 2>&1 & local s=$!
    sleep 1
    # shellcheck disable=SC2086
    out=$(timeout 120 "$1" -d "$D" -x "$G" $2 -F 127.0.0.1 2>&1 | grep -E '^ *#bytes|^ *[0-9]+ +[0-9]+ ')
    wait "$s"
    [[ $out == *inf* && $try -lt 3 ]] || break
    echo "$1 | (a run reported inf: repeated)"
  done
  printf '%s\n' "$out" | sed "s/^/$1 | /"
}
perf_pair ib_send_lat "-s 8 -n 5000"
perf_pair ib_send_lat "-s 4096 -n 1000"
perf_pair ib_write_bw "-s 65536 -n 2000"
perf_pair ib_write_bw "-s 1048576 -n 200"
perf_pair ib_send_bw "-s 65536 -n 2000"

# Medians of 5 repetitions: under TCG single slow iterations (ms) make means meaningless.
# one_way_typical (half the median round trip) is the figure to hold against ib_send_lat's
# t_typical, which is a median too; one_way is the mean.
section "braid-micro-p2p over $D: ${plugins[*]} (medians; pingpong = round trip, one_way = half)"
filter='^(pingpong/[a-z]+/(8|4096)|stream/[a-z]+/(65536|1048576))/real_time$'
# The verbs plugin under each receive-queue mode (the default is all-shared; the mixed
# P,4096,32:S,65536,64 was the default until 2026-11-28): the figures behind the default in
# docs/verbs.md.
SPECS=(P,4096,32:P,65536,16 S,256,512:S,8192,256 P,4096,32:S,65536,64 default)
# The default once more with the registration cache off: the benchmark sends from and into
# ordinary buffers, so that row pays ibv_reg_mr/ibv_dereg_mr per rendezvous. And once with
# eager messages written into advertised receives (BRAID_VERBS_DIRECT=on; `direct` is the share
# of rank 0's messages that went so). And once with every eager message carrying its header
# (BRAID_VERBS_HEADERLESS=off): what headerless messages save.
for p in "${plugins[@]}"; do
  specs=(-)
  [[ $p == verbs ]] && specs=("${SPECS[@]}" default-rcache-off default-direct-on default-headerless-off)
  for spec in "${specs[@]}"; do
    queues=()
    [[ $spec != - && $spec != default* ]] && queues=(BRAID_VERBS_RECV_QUEUES="$spec")
    [[ $spec == default-rcache-off ]] && queues=(BRAID_VERBS_RCACHE=off)
    [[ $spec == default-direct-on ]] && queues=(BRAID_VERBS_DIRECT=on)
    [[ $spec == default-headerless-off ]] && queues=(BRAID_VERBS_HEADERLESS=off)
    [[ $spec != - ]] && echo "-- verbs with BRAID_VERBS_RECV_QUEUES=${spec%%-*}${queues[*]:+ (${queues[*]})}"
    env "${UCX_RXE[@]}" BRAID_VERBS_DEVICE=rxe0:1 "${queues[@]}" "$BIN/braid-micro-p2p" \
      --transports="$p" --benchmark_filter="$filter" --benchmark_min_time=0.3 \
      --benchmark_repetitions=5 --benchmark_report_aggregates_only=true 2>&1 |
      grep -E '^(pingpong|stream)/.*_median'
  done
done

section "collectives over $D, 2 ranks in this guest: ${plugins[*]} (braid-bench, osu mode)"
collectives env "${BENCH_ENV[@]}" timeout 900 "$BIN/braidrun" -n 2

section "registered receive memory per process (verbs counters at finalize, rank 0)"
if [[ ${plugins[0]} != verbs ]]; then
  echo "(verbs plugin not built: no figures)"
else
  for spec in "${SPECS[@]}"; do
    queues=()
    [[ $spec != default ]] && queues=(BRAID_VERBS_RECV_QUEUES="$spec")
    for n in 2 4 8; do
      line=$(env BRAID_TRANSPORT=verbs BRAID_VERBS_DEVICE=rxe0:1 "${queues[@]}" \
             BRAID_DEBUG=info timeout 300 "$BIN/braidrun" -n "$n" "$BIN/allreduce_c" 2>&1 |
             grep -m1 -E '\[rank 0\].*verbs counters:')
      # Only the counters about receive queues and registrations, to keep the table readable.
      mem=$(grep -oE '[a-z_]*(reg|recv|srq|posted)[a-z_]*=[0-9]+' <<<"$line" | tr '\n' ' ')
      printf '%-24s %2d ranks: %s\n' "$spec" "$n" "${mem:-(no counter line: ${line:-none})}"
    done
  done
fi
