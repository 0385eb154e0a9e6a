#!/usr/bin/env bash
# Quick start demo: on a fresh Debian 12 machine, as root, from the repository root:
#   bash scripts/quickstart-demo.sh
# Installs the Debian packages the build needs (only those missing), builds braid (Release,
# Ninja) in ${BRAID_BUILD_DIR:-build} and runs the C and C++ examples on 4 ranks with braidrun.
# Safe to run again: it only installs what is missing and rebuilds what changed.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir=${BRAID_BUILD_DIR:-build}
packages=(build-essential cmake ninja-build pkg-config libucx-dev ucx-utils
          libgtest-dev libgmock-dev libbenchmark-dev libhwloc-dev)

# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh

banner "braid quick start: packages"
ensure_packages "${packages[@]}"

banner "braid quick start: configure and build ($build_dir, Release)"
configure -DCMAKE_BUILD_TYPE=Release
# Only what the demo runs: the library, the UCX plugin, the launcher, braid-info and the two
# examples (scripts/test.sh builds everything else).
cmake --build "$build_dir" --parallel "$(nproc)" \
  --target braid braid-transport-ucx braidrun braid-info allreduce_c allreduce_cpp

for example in allreduce_c allreduce_cpp; do
  banner "braid quick start: $build_dir/bin/braidrun -n 4 $build_dir/bin/$example"
  "$build_dir/bin/braidrun" -n 4 "$build_dir/bin/$example"
done

banner "braid quick start: done"
echo "Both examples ran on 4 ranks. Next: bash scripts/test.sh (all tests),"
echo "$build_dir/bin/braid-info (plugins and algorithms), $build_dir/bin/braidrun --help."
