#!/usr/bin/env bash
# shellcheck disable=SC2054  # commas in the values below are not array separators
# Performance figures on soft-RoCE, from ONE guest run (tests/vm/run-in-guest): p2p latency and
# bandwidth of every braid transport plugin over rxe0 (bench/micro's braid-micro-p2p: the verbs
# plugin when it is built, UCX restricted to rxe0), next to perftest's ib_send_lat and
# ib_write_bw on the same device, then the registered receive memory per process of the verbs
# plugin in per-peer and shared mode as the rank count grows (its counters, as BRAID_DEBUG=info
# prints them at finalize). Figures only, no pass/fail; the guest is TCG-emulated, so they
# compare plugins with each other and with perftest, not with real hardware.
#   tests/rxe/perf-in-guest.sh [BUILD_DIR]        (as root; BUILD_DIR defaults to ./build)
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
BUILD=$(cd "${1:-build}" && pwd -P) || { echo "no build directory ${1:-build}" >&2; exit 2; }
if [[ -z ${RXE_VM:-} ]]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/braid-rxe-perf.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  cd "$work" && "$HERE/../vm/run-in-guest" --timeout 1800 -- "$HERE/perf-in-guest.sh" "$BUILD"
  exit
fi

BIN=$BUILD/bin
D=$RXE_DEV G=$RXE_GID_INDEX
UCX_RXE=(UCX_TLS=rc_verbs,ud_verbs,self UCX_NET_DEVICES=rxe0:1)
section() { printf '\n==== %s\n' "$*"; }
plugins=(ucx)
[[ -e $BUILD/lib/libbraid-transport-verbs.so ]] && plugins=(verbs ucx)

section "perftest on $D (server and client in this guest, GID index $G)"
perf_pair() {   # perf_pair "ARGS": server, then the client on 127.0.0.1 (the OOB exchange)
  # shellcheck disable=SC2086  # ARGS is split on purpose
  timeout 120 "$1" -d "$D" -x "$G" $2 -F >/dev/null 2>&1 & local s=$!
  sleep 1
  # shellcheck disable=SC2086
  timeout 120 "$1" -d "$D" -x "$G" $2 -F 127.0.0.1 2>&1 | grep -E '^ *#bytes|^ *[0-9]+ +[0-9]+ ' | sed "s/^/$1 | /"
  wait "$s"
}
perf_pair ib_send_lat "-s 8 -n 5000"
perf_pair ib_send_lat "-s 4096 -n 1000"
perf_pair ib_write_bw "-s 65536 -n 2000"
perf_pair ib_write_bw "-s 1048576 -n 200"
perf_pair ib_send_bw "-s 65536 -n 2000"

# Medians of 5 repetitions: under TCG single slow iterations (ms) make means meaningless; the
# median is what ib_send_lat's t_typical reports too.
section "braid-micro-p2p over $D: ${plugins[*]} (medians; pingpong = round trip, one_way = half)"
filter='^(pingpong/[a-z]+/(8|4096)|stream/[a-z]+/(65536|1048576))/real_time$'
# The verbs plugin under each receive-queue mode (the default is mixed): the figures behind
# the default in docs/verbs.md.
SPECS=(P,4096,32:P,65536,16 S,256,512:S,8192,256 default)
for p in "${plugins[@]}"; do
  specs=(-)
  [[ $p == verbs ]] && specs=("${SPECS[@]}")
  for spec in "${specs[@]}"; do
    queues=()
    [[ $spec != - && $spec != default ]] && queues=(BRAID_VERBS_RECV_QUEUES="$spec")
    [[ $spec != - ]] && echo "-- verbs with BRAID_VERBS_RECV_QUEUES=$spec"
    env "${UCX_RXE[@]}" BRAID_VERBS_DEVICE=rxe0:1 "${queues[@]}" "$BIN/braid-micro-p2p" \
      --transports="$p" --benchmark_filter="$filter" --benchmark_min_time=0.3 \
      --benchmark_repetitions=5 --benchmark_report_aggregates_only=true 2>&1 |
      grep -E '^(pingpong|stream)/.*_median'
  done
done

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
