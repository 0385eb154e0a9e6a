#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (-fsanitize=fuzzer,address,undefined) in their own
# build directory, replays every input in tests/fuzz/crashes/<target>/ (inputs that once
# crashed: regression tests), then fuzzes each target for a fixed time from its seed corpus in
# tests/fuzz/corpus/<target>/. Prints the executions run per target; exits non-zero on any
# crash, leak or sanitizer report (the input is saved under <build>/artifacts/<target>/: copy
# it into tests/fuzz/crashes/<target>/ with the fix).
#   BRAID_FUZZ_BUILD_DIR (default build-fuzz), BRAID_FUZZ_SECONDS (default 20 per target),
#   BRAID_FUZZ_TARGETS (default: every target built), BRAID_FUZZ_JOBS (targets fuzzed at once,
#   default nproc), CXX/CC (default clang++-14/clang-14).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
build=${BRAID_FUZZ_BUILD_DIR:-build-fuzz}
seconds=${BRAID_FUZZ_SECONDS:-20}
cxx=${CXX:-clang++-14}
cc=${CC:-clang-14}
command -v "$cxx" >/dev/null || { echo "run_fuzzers.sh: $cxx not found (Debian: apt-get install clang-14)" >&2; exit 1; }

generator=()
[[ -f $build/CMakeCache.txt ]] || generator=(-G Ninja)
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$cc" -DBRAID_FUZZ=ON \
  -DBRAID_BUILD_TESTS=OFF -DBRAID_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" --target braid_fuzzers --parallel "$(nproc)"

targets=(${BRAID_FUZZ_TARGETS:-$(cd "$build/fuzz" && ls fuzz_*)})
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# Regression inputs first, one target after another (each replay takes well under a second).
for t in "${targets[@]}"; do
  crashes=tests/fuzz/crashes/$t
  if compgen -G "$crashes/*" >/dev/null; then
    echo "== $t: replaying $(ls "$crashes" | wc -l) regression input(s) from $crashes"
    "$build/fuzz/$t" -runs=0 "$crashes"/* 2>&1 | tail -n 3
  fi
done

# Then the timed fuzzing, as many targets at once as there are cores: each libFuzzer process
# is single-threaded, so one at a time left a core idle for the whole phase.
fuzz_one() {   # fuzz_one TARGET: exit status of the fuzzer; its output in $build/TARGET.log
  local t=$1 work=$build/corpus/$1 artifacts=$build/artifacts/$1/
  mkdir -p "$work" "$artifacts" "tests/fuzz/corpus/$t"
  "$build/fuzz/$t" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 \
    -rss_limit_mb=2048 -artifact_prefix="$artifacts" "$work" "tests/fuzz/corpus/$t" \
    >"$build/$t.log" 2>&1
}
slots=${BRAID_FUZZ_JOBS:-$(nproc)}
declare -A pid_of=()
failed=()
for t in "${targets[@]}"; do
  while (( $(jobs -rp | wc -l) >= slots )); do wait -n || true; done
  echo "== $t: fuzzing for $seconds s from tests/fuzz/corpus/$t"
  fuzz_one "$t" &
  pid_of[$t]=$!
done
summary=()
for t in "${targets[@]}"; do
  if ! wait "${pid_of[$t]}"; then
    tail -n 40 "$build/$t.log"
    echo "run_fuzzers.sh: $t FAILED; the input is in $build/artifacts/$t/" >&2
    failed+=("$t")
    continue
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/$t.log" | tail -n 1)
  summary+=("$t: ${execs:-?} executions in $seconds s, corpus $(ls "$build/corpus/$t" | wc -l) inputs")
done
echo "== fuzzing summary"
printf '  %s\n' "${summary[@]}"
(( ${#failed[@]} == 0 )) || { echo "run_fuzzers.sh: failed: ${failed[*]}" >&2; exit 1; }
