#!/usr/bin/env bash
# Builds braid with -Werror and runs every test through CTest. On a fresh Debian 12 machine, as
# root, from the repository root:
#   bash scripts/test.sh
# Installs the Debian packages it needs (only those missing), configures ${BRAID_BUILD_DIR:-build}
# (Ninja, ${BRAID_BUILD_TYPE:-RelWithDebInfo} with -g1, BRAID_WERROR=ON), builds everything and
# runs `ctest -j2`. Exits non-zero on any build error or failed test. Safe to run again. Extra
# arguments are passed to ctest (e.g. -L unit).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir=${BRAID_BUILD_DIR:-build}
# python3 is used by helper scripts; Open MPI is for the MPI baseline of the benchmarks and,
# with libpmix-dev (PMIx support in libbraid) and slurm-wlm, for the launch tests (tests/launch).
# MPICH is the second MPI baseline and gnuplot-nox draws the plots of bench/compare; gfortran
# builds the Fortran program of the MPI interposition tests (tests/mpi).
packages=(build-essential cmake ninja-build pkg-config libucx-dev ucx-utils
          libgtest-dev libgmock-dev libbenchmark-dev libhwloc-dev
          python3 openmpi-bin libopenmpi-dev libpmix-dev slurm-wlm
          mpich libmpich-dev gnuplot-nox gfortran)
# The verbs plugin builds against rdma-core. The rxe tests (tests/rxe) run in a qemu guest with
# a soft-RoCE device; tests/vm/run-in-guest installs qemu, Debian's kernel and busybox-static
# itself, when missing (it skips the kernel's /boot initrd, which the guest does not use).
packages+=(libibverbs-dev librdmacm-dev rdma-core ibverbs-providers ibverbs-utils rdmacm-utils
           perftest)

# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh

start=$SECONDS
banner "braid tests: packages"
ensure_packages "${packages[@]}"

# The build type is set explicitly so the result does not depend on what configured the build
# directory before (the quick start demo configures it as Release).
build_type=${BRAID_BUILD_TYPE:-RelWithDebInfo}
banner "braid tests: configure $build_dir ($build_type, BRAID_WERROR=ON)"
# RelWithDebInfo with line tables only (-g1, CMake's default being -g): backtraces and perf still
# name functions and lines, and the build takes about a quarter less time (CI's budget).
lines_only="-O2 -g1 -DNDEBUG"
configure -DCMAKE_BUILD_TYPE="$build_type" -DBRAID_WERROR=ON -DBRAID_BUILD_TESTS=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$lines_only" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$lines_only"

banner "braid tests: build"
cmake --build "$build_dir" --parallel "$(nproc)"
echo "built in $((SECONDS - start)) s"

banner "braid tests: ctest -j2"
# The multi-process tests declare PROCESSORS (their rank count) so -j2 never oversubscribes.
# The soak (10^5 collectives, several minutes) runs only on request: ctest -L soak.
rc=0
ctest --test-dir "$build_dir" --output-on-failure -j2 -LE soak "$@" || rc=$?
if [[ $rc -ne 0 ]]; then
  banner "braid tests: FAILED (ctest exit $rc) after $((SECONDS - start)) s"
  exit "$rc"
fi
banner "braid tests: all passed in $((SECONDS - start)) s"
