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

banner() { printf '\n==== %s\n' "$*"; }

# Installs the packages that are not installed yet; apt-get update only if one is missing.
ensure_packages() {
  local missing=() pkg
  for pkg in "$@"; do
    if [[ $(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true) != "install ok installed" ]]; then
      missing+=("$pkg")
    fi
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    echo "all required Debian packages are installed"
    return 0
  fi
  echo "installing: ${missing[*]}"
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "error: run as root (or install sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
}

# Configures the build directory with Ninja; an existing one keeps its generator and cache.
configure() {
  local generator=()
  [[ -f $build_dir/CMakeCache.txt ]] || generator=(-G Ninja)
  cmake -S . -B "$build_dir" "${generator[@]}" "$@"
}

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
