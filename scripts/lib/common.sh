# Shared by scripts/quickstart-demo.sh and scripts/test.sh (sourced, not run): banners, the
# Debian package check-and-install, and configuring a build directory. Expects $build_dir.

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
