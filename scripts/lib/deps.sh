# scripts/lib/deps.sh — install missing Debian packages (apt-get update at most once per run).
# Sourced by run.sh and test.sh; nothing here relies on what a previous session installed.

MEMFIT_APT_UPDATED=${MEMFIT_APT_UPDATED:-0}

memfit_sudo() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "memfit: need root (or sudo) to install: $*" >&2; return 1; fi
}

# ensure_packages PKG... — installs those not yet installed.
ensure_packages() {
  local missing=()
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "memfit: installing ${missing[*]}" >&2
  if [ "$MEMFIT_APT_UPDATED" != 1 ]; then
    memfit_sudo apt-get update -qq
    MEMFIT_APT_UPDATED=1
  fi
  memfit_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# The packages of the native build and its tests (why each is there: README "Dependencies").
MEMFIT_NATIVE_PACKAGES=(
  g++ cmake ninja-build ccache pkg-config
  nlohmann-json3-dev libfmt-dev libcli11-dev libcurl4-openssl-dev
  doctest-dev libcpp-httplib-dev libbenchmark-dev
)
