# Shared by the launch tests (sourced by run_case.sh). Set by CMake: BRAID_BIN (the build's
# bin directory). Every command that waits runs under `timeout`.

LAUNCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export BRAID_SLURM_DIR=${BRAID_SLURM_DIR:-/var/tmp/braid-launch-slurm}
export SLURM_CONF=$BRAID_SLURM_DIR/etc/slurm.conf
SKIP_CODE=77
SUITE_ARGS=('--gtest_filter=-Large.*:Timeout.*' --gtest_color=no)
# Open MPI refuses root without these; the ranks it forks inherit mpirun's environment.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# In CI (CI=true) every launch test is mandatory: what would be a skip elsewhere fails.
skip_or_fail() {
  if [[ ${CI:-} == true ]]; then
    echo "FAIL: $* (launch tests are mandatory when CI=true)" >&2
    exit 1
  fi
  echo "SKIP: $*"
  exit "$SKIP_CODE"
}

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Installs the Debian packages that are missing (as root, with apt-get); skips when it cannot.
ensure_packages() {
  local missing=() pkg
  for pkg in "$@"; do
    [[ $(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true) == "install ok installed" ]] ||
      missing+=("$pkg")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null ||
    skip_or_fail "missing Debian packages ${missing[*]} and not root to install them"
  echo "installing ${missing[*]}"
  # Recommends included: that is the install the cluster scripts were tested with.
  if ! { timeout 600 apt-get install -y "${missing[@]}" ||
         { timeout 300 apt-get update && timeout 600 apt-get install -y "${missing[@]}"; }; } \
       >"${TMPDIR:-/tmp}/braid-launch-apt.log" 2>&1; then
    tail -n 20 "${TMPDIR:-/tmp}/braid-launch-apt.log" >&2
    skip_or_fail "could not install ${missing[*]}"
  fi
}

need_cluster() {
  [[ -f $SLURM_CONF ]] && timeout 10 sinfo -h >/dev/null 2>&1 ||
    skip_or_fail "the test Slurm cluster is not running (see the output of launch.cluster.start)"
}

# run SECONDS LOG command...: runs the command with a time limit, output to LOG (and echoed
# when it fails); returns its exit status.
run() {
  local limit=$1 log=$2
  shift 2
  echo "+ $*"
  local rc=0
  timeout --kill-after=5 "$limit" "$@" >"$log" 2>&1 || rc=$?
  [[ $rc -eq 124 ]] && echo "timed out after $limit s: $*" >>"$log"
  return "$rc"
}

show() { sed 's/^/    | /' "$1"; }

# expect_success RC LOG WHAT: the run succeeded, else show its output and fail (or skip, when
# the only problem is a libbraid built without PMIx).
expect_success() {
  local rc=$1 log=$2 what=$3
  [[ $rc -eq 0 ]] && return 0
  pmix_missing "$log"
  show "$log"
  fail "$what exited with $rc"
}

pmix_missing() {  # LOG
  ! grep -q 'this libbraid was built without PMIx' "$1" ||
    skip_or_fail "libbraid was built without PMIx (install libpmix-dev and configure again)"
}

expect_line() {  # LOG REGEX WHAT
  grep -Eq -- "$2" "$1" || { show "$1"; fail "$3: no line matches /$2/"; }
}

# check_probe LOG N: launch_probe printed N lines without MISMATCH, and for each rank braid's
# BRAID_DEBUG=info line "job source: ...: rank R of N, local rank L of M" agrees with the
# launcher's own local rank and size.
check_probe() {
  local log=$1 n=$2 count line r size lr ls
  count=$(grep -c '^\(\[[0-9]*\] \)\?launch_probe: rank [0-9]* of' "$log" || true)
  [[ $count -eq $n ]] || { show "$log"; fail "expected $n launch_probe lines, got $count"; }
  ! grep -q MISMATCH "$log" || { show "$log"; fail "braid and the launcher disagree"; }
  # A launcher that does not say a rank's local rank (-1) fails the comparison, not skips it.
  while read -r line; do
    [[ $line =~ rank\ ([0-9]+)\ of\ ([0-9]+),\ local\ rank\ (-?[0-9]+)\ of\ (-?[0-9]+) ]] ||
      { show "$log"; fail "no launcher's view in: $line"; }
    r=${BASH_REMATCH[1]} size=${BASH_REMATCH[2]} lr=${BASH_REMATCH[3]} ls=${BASH_REMATCH[4]}
    grep -q "\[rank $r\] braid info: job source: .*: rank $r of $size, local rank $lr of $ls\$" "$log" ||
      { show "$log"; fail "braid's local rank for rank $r differs from the launcher's ($lr of $ls)"; }
  done < <(grep 'launch_probe: rank' "$log")
  # Every job here puts two ranks or more on a node. Their node segment is named by a hash of
  # the job's key, which under PMIx rank 0 makes: fnv1a of an empty key is cbf29ce484222325.
  expect_line "$log" 'world: node-local path on: .* of /braid-[0-9a-f]{16}-node-' \
    "the world's node segment"
  ! grep -q '/braid-cbf29ce484222325-' "$log" ||
    { show "$log"; fail "the node segment's name has no job key in it"; }
  echo "ranks, sizes and local ranks agree with the launcher for all $n ranks"
}

# bootstrap_ms LOG: the slowest rank's "bootstrap ... in X ms" (what forming the job cost).
bootstrap_ms() {
  grep -o 'bootstrap [^ ]* in [0-9.]* ms' "$1" | awk '{ if ($4 > m) m = $4 } END { printf "%.1f", m }'
}
