#!/usr/bin/env bash
# Install test: installs the build tree into a fresh prefix and uses that prefix the way an
# application would, with nothing from the build tree or the source tree on any search path:
#   1. cmake --install <build dir> --prefix <tmp>/prefix, and check the installed layout;
#   2. <prefix>/bin/braid-info must find the UCX plugin in the prefix's libdir;
#   3. tests/install/consumer (C and C++) configured with find_package(braid CONFIG) through
#      CMAKE_PREFIX_PATH, and built;
#   4. the C consumer built with plain `cc $(pkg-config --cflags --libs braid)` through
#      PKG_CONFIG_PATH;
#   5. every consumer run under the installed braidrun on 1 and 2 ranks, with
#      LD_LIBRARY_PATH=<libdir>, checking that the installed libbraid and the installed plugin
#      are the ones loaded and that every rank computed the right results.
#
# usage: run_install_test.sh <build dir> <source dir> <temp dir>
# env:   CMAKE (default: cmake), CC (default: cc), BRAID_KEEP_INSTALL_TEST=1 keeps the temp dir.
set -euo pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 <build dir> <source dir> <temp dir>" >&2
  exit 2
fi
build_dir=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
mkdir -p "$3"
tmp_base=$(cd "$3" && pwd)
cmake=${CMAKE:-cmake}
cc=${CC:-cc}

tmp=$(mktemp -d "$tmp_base/install-test.XXXXXX")
cleanup() {
  local rc=$?
  if [[ ${BRAID_KEEP_INSTALL_TEST:-0} == 1 ]]; then
    echo "kept $tmp"
  else
    rm -rf "$tmp"
    rmdir "$tmp_base" 2>/dev/null || true
  fi
  if [[ $rc -ne 0 ]]; then
    echo "INSTALL TEST FAILED (exit $rc)${failed_at:+ at: $failed_at}" >&2
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'failed_at="line $LINENO: $BASH_COMMAND"' ERR
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
step() { printf '\n=== %s\n' "$*"; }

# Nothing of the caller's braid environment (a job identity, forced algorithms, extra plugin
# directories) may leak into the consumers: they must work from the prefix alone.
while IFS= read -r var; do unset "$var"; done < <(compgen -e | grep '^BRAID_' || true)
unset LD_LIBRARY_PATH PKG_CONFIG_LIBDIR CMAKE_PREFIX_PATH

prefix=$tmp/prefix

# ---------------------------------------------------------------------------------------------
step "install $build_dir into $prefix"
"$cmake" --install "$build_dir" --prefix "$prefix"

lib=$(find "$prefix" -name 'libbraid.so' \( -type l -o -type f \) -print -quit)
[[ -n $lib ]] || fail "libbraid.so was not installed"
libdir=$(dirname "$lib")
# shellcheck disable=SC2001  # a bracket expression is clearer in sed
libdir_re=$(sed 's/[][\\.*^$+?(){}|]/\\&/g' <<<"$libdir")  # for grep -E
echo "libdir: $libdir"
for f in include/braid/braid.h include/braid/braid.hpp include/braid/transport.h \
         bin/braidrun bin/braid-info bin/braid-bench; do
  [[ -f $prefix/$f ]] || fail "$prefix/$f was not installed"
done
for f in libbraid-transport-ucx.so cmake/braid/braidConfig.cmake \
         cmake/braid/braidConfigVersion.cmake cmake/braid/braidTargets.cmake \
         pkgconfig/braid.pc; do
  [[ -f $libdir/$f ]] || fail "$libdir/$f was not installed (plugins and packages belong next to libbraid.so)"
done
# libbraid.so -> libbraid.so.<major> -> libbraid.so.<major>.<minor>.<patch>
soname_link=$(readlink "$libdir/libbraid.so")
[[ $soname_link =~ ^libbraid\.so\.[0-9]+$ ]] || fail "libbraid.so -> '$soname_link', expected libbraid.so.<major>"
real=$(readlink "$libdir/$soname_link")
[[ $real =~ ^libbraid\.so\.[0-9]+\.[0-9]+\.[0-9]+$ && -f $libdir/$real ]] ||
  fail "$soname_link -> '$real', expected libbraid.so.<major>.<minor>.<patch>"
soname=$(objdump -p "$libdir/$real" | awk '$1 == "SONAME" { print $2 }')
[[ $soname == "$soname_link" ]] || fail "SONAME of $real is '$soname', expected $soname_link"
cmake_version=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$libdir/cmake/braid/braidConfigVersion.cmake")
[[ $real == "libbraid.so.$cmake_version" ]] ||
  fail "braidConfigVersion.cmake says $cmake_version but the library is $real"
echo "layout ok: $soname_link -> $real, package version $cmake_version"

# ---------------------------------------------------------------------------------------------
step "installed braid-info finds the plugin in the prefix"
info=$("$prefix/bin/braid-info")
echo "$info" | sed -n '1,/^algorithms:/p'
grep -Eq "^  ucx +usable \\($libdir_re/libbraid-transport-ucx\\.so\\)$" <<<"$info" ||
  fail "braid-info does not report $libdir/libbraid-transport-ucx.so as usable"
first_dir=$(awk '/^plugin search path:/ { getline; sub(/^  /, ""); print; exit }' <<<"$info")
[[ $first_dir == "$libdir" || $first_dir == "$prefix/lib" ]] ||
  fail "braid-info searches '$first_dir' first, not the prefix"

# ---------------------------------------------------------------------------------------------
step "CMake consumer: find_package(braid CONFIG) with CMAKE_PREFIX_PATH=$prefix"
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
"$cmake" -S "$source_dir/tests/install/consumer" -B "$tmp/consumer-build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF
braid_dir=$(sed -n 's/^braid_DIR:PATH=//p' "$tmp/consumer-build/CMakeCache.txt")
[[ $braid_dir == "$libdir/cmake/braid" ]] || fail "find_package found braid in '$braid_dir', not $libdir/cmake/braid"
"$cmake" --build "$tmp/consumer-build"

# ---------------------------------------------------------------------------------------------
step "pkg-config consumer: $cc consumer.c \$(pkg-config --cflags --libs braid)"
export PKG_CONFIG_PATH=$libdir/pkgconfig
pc_version=$(pkg-config --modversion braid)
[[ $pc_version == "$cmake_version" ]] || fail "braid.pc says version $pc_version, the CMake package $cmake_version"
flags=$(pkg-config --cflags --libs braid)
echo "pkg-config --cflags --libs braid: $flags"
[[ " $flags " == *" -I$prefix/include "* ]] || fail "pkg-config --cflags lacks -I$prefix/include"
[[ " $flags " == *" -L$libdir "* && " $flags " == *" -lbraid "* ]] || fail "pkg-config --libs lacks -L$libdir -lbraid"
mkdir -p "$tmp/pc-build"
# shellcheck disable=SC2046  # the flags are meant to be split into words
"$cc" -std=c11 -Wall -Wextra -Werror -o "$tmp/pc-build/consumer_c" \
  "$source_dir/tests/install/consumer/consumer.c" $(pkg-config --cflags --libs braid)

# ---------------------------------------------------------------------------------------------
step "run the consumers under the installed braidrun"
export LD_LIBRARY_PATH=$libdir
for exe in "$tmp/consumer-build/consumer_c" "$tmp/consumer-build/consumer_cpp" \
           "$tmp/pc-build/consumer_c"; do
  resolved=$(ldd "$exe" | awk '$1 ~ /^libbraid\.so/ { print $3 }')
  [[ $resolved == "$libdir/$soname_link" ]] ||
    fail "$exe loads libbraid from '$resolved', not $libdir/$soname_link"
  name=$(basename "$exe")
  for n in 1 2; do
    echo "--- braidrun -n $n ${exe#"$tmp"/}"
    log=$tmp/run.log
    rc=0
    BRAID_DEBUG=info "$prefix/bin/braidrun" -n "$n" --timeout 60 --tag-output "$exe" \
      >"$log" 2>&1 || rc=$?
    cat "$log"
    [[ $rc -eq 0 ]] || fail "braidrun -n $n $exe exited $rc"
    for ((r = 0; r < n; ++r)); do
      grep -Eq "$name: rank $r of $n over [a-z0-9_-]+: ok$" "$log" ||
        fail "rank $r of $n did not report a correct result"
      grep -Eq "\\[rank $r\\] .*transport [a-z0-9_-]+ \\($libdir_re/libbraid-transport-[a-z0-9_-]+\\.so\\) ready" "$log" ||
        fail "rank $r did not load its transport plugin from $libdir"
    done
  done
done

step "the installed braid-bench measures the installed braid (its own libbraid, no LD_LIBRARY_PATH)"
log=$tmp/bench.log
rc=0
env -u LD_LIBRARY_PATH "$prefix/bin/braidrun" -n 2 --timeout 60 "$prefix/bin/braid-bench" \
  allgather --max-bytes 4K --iters 2 --check >"$log" 2>&1 || rc=$?
cat "$log"
[[ $rc -eq 0 ]] || fail "the installed braid-bench exited $rc"
grep -Eq "^ +4096 " "$log" || fail "the installed braid-bench printed no 4096-byte row"

# The MPI twins built here are installed next to braid-bench, and run from the prefix.
twins=()
for twin in braid-bench-mpi braid-bench-mpich; do
  [[ -f $build_dir/bin/$twin ]] || continue
  [[ -x $prefix/bin/$twin ]] || fail "$prefix/bin/$twin was not installed"
  out=$(env -u LD_LIBRARY_PATH "$prefix/bin/$twin" --help 2>&1) ||
    fail "the installed $twin --help failed: $out"
  grep -q "alltoallv" <<<"$out" || fail "the installed $twin does not list alltoallv: $out"
  twins+=("$twin")
done

# The MPI interposition libraries built here are installed next to libbraid, and the installed
# one is what an unmodified MPI program gets when preloaded from the prefix (it finds the
# installed libbraid by its own rpath).
mpi_checked=()
for flavor in openmpi mpich; do
  [[ -f $build_dir/lib/libbraid-mpi-$flavor.so ]] || continue
  [[ -f $libdir/libbraid-mpi-$flavor.so ]] || fail "$libdir/libbraid-mpi-$flavor.so was not installed"
  mpi_checked+=("$flavor")
done
mpi_prog=$build_dir/bin/mpi_collectives_openmpi
if [[ -f $libdir/libbraid-mpi-openmpi.so && -x $mpi_prog ]] && command -v mpirun.openmpi >/dev/null; then
  step "an MPI program under mpirun.openmpi with the installed libbraid-mpi-openmpi.so preloaded"
  resolved=$(env -u LD_LIBRARY_PATH ldd "$libdir/libbraid-mpi-openmpi.so" | awk '$1 ~ /^libbraid\.so/ { print $3 }')
  [[ $resolved == "$libdir/$soname_link" ]] ||
    fail "the installed libbraid-mpi-openmpi.so loads libbraid from '$resolved', not $libdir/$soname_link"
  log=$tmp/mpi.log
  rc=0
  env -u LD_LIBRARY_PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    timeout 120 mpirun.openmpi -np 2 --oversubscribe --bind-to none --mca btl self,vader,tcp \
    --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo -x BRAID_MPI_REPORT=1 \
    -x LD_PRELOAD="$libdir/libbraid-mpi-openmpi.so" -x MPI_TEST_OUT="$tmp" "$mpi_prog" \
    >"$log" 2>&1 || rc=$?
  [[ $rc -eq 0 ]] || { cat "$log"; fail "the MPI program with the installed library exited $rc"; }
  grep '^braid-mpi:' "$log" || fail "no braid-mpi report line"
  grep -Eq '^braid-mpi: .*allreduce=[1-9][0-9]*/' "$log" || fail "braid took no MPI_Allreduce"
fi

echo
echo "install test passed: prefix layout, braid-info, braid-bench${twins:+ (${twins[*]})}, CMake package, pkg-config, 1 and 2 ranks${mpi_checked:+, MPI libraries (${mpi_checked[*]})}"
