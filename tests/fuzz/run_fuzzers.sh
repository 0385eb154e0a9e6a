#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (-fsanitize=fuzzer,address,undefined) in their own
# build directory, replays every input in tests/fuzz/crashes/<target>/ (inputs that once
# crashed: regression tests), then fuzzes each target for a fixed time from its seed corpus in
# tests/fuzz/corpus/<target>/. Prints the executions run per target; exits non-zero on any
# crash, leak or sanitizer report (the input is saved under <build>/artifacts/<target>/: copy
# it into tests/fuzz/crashes/<target>/ with the fix).
#   BRAID_FUZZ_BUILD_DIR (default build-fuzz), BRAID_FUZZ_SECONDS (default 20 per target),
#   BRAID_FUZZ_TARGETS (default: every target built), CXX/CC (default clang++-14/clang-14).
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
summary=()
for t in "${targets[@]}"; do
  bin=$build/fuzz/$t
  crashes=tests/fuzz/crashes/$t
  if compgen -G "$crashes/*" >/dev/null; then
    echo "== $t: replaying $(ls "$crashes" | wc -l) regression input(s) from $crashes"
    "$bin" -runs=0 "$crashes"/* 2>&1 | tail -n 3
  fi
  work=$build/corpus/$t
  artifacts=$build/artifacts/$t/
  mkdir -p "$work" "$artifacts" "tests/fuzz/corpus/$t"
  echo "== $t: fuzzing for $seconds s from tests/fuzz/corpus/$t"
  log=$build/$t.log
  if ! "$bin" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="$artifacts" "$work" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
    tail -n 40 "$log"
    echo "run_fuzzers.sh: $t FAILED; the input is in $artifacts" >&2
    exit 1
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  summary+=("$t: ${execs:-?} executions in $seconds s, corpus $(ls "$work" | wc -l) inputs")
done
echo "== fuzzing summary"
printf '  %s\n' "${summary[@]}"
