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
  libpcre2-dev libutf8proc-dev python3-jinja2
  libsentencepiece-dev sentencepiece
)

# The LibTorch build (MEMFIT_WITH_TORCH, preset native-torch: memfit-torch = `memfit load|forward`).
# libtorch-dev is Debian's CPU-only LibTorch 1.13.1; python3-torch is only for scripts/bench-load.sh
# (torch.load of the same weights as .bin, the tool a user would otherwise reach for).
# libopenblas0-pthread: Debian's LibTorch calls the system BLAS (libblas.so.3), which is the
# single-threaded reference implementation unless OpenBLAS provides it; memfit forward needs a
# threaded BLAS to be usable, and the golden-logit tests pass with either.
# libgloo-dev: the Gloo headers LibTorch's c10d headers include (ProcessGroupGloo.hpp), for
# pipeline-parallel generation (`memfit generate --nodes`); libtorch links Gloo itself.
MEMFIT_TORCH_PACKAGES=(libtorch-dev libopenblas0-pthread libgloo-dev)
MEMFIT_TORCH_BENCH_PACKAGES=(python3-torch)

# The WebAssembly build (wasm/: Debian's Emscripten) and the page's browser tests (tests/web:
# node --test + playwright-core driving Debian's chromium). Why each: README "Dependencies".
MEMFIT_WEB_PACKAGES=(emscripten chromium zopfli terser esbuild)

# ensure_web_packages — the above, plus node and npm unless some node is already installed
# (a NodeSource nodejs ships its own npm; Debian's npm package would conflict with it).
ensure_web_packages() {
  local extra=()
  command -v node >/dev/null || extra+=(nodejs)
  command -v npm >/dev/null || extra+=(npm)
  ensure_packages "${MEMFIT_WEB_PACKAGES[@]}" "${extra[@]}"
}

# ensure_npm_packages — node_modules exactly as package-lock.json says (npm ci), once per lock.
ensure_npm_packages() {
  local stamp=node_modules/.memfit-lock
  if [ -f "$stamp" ] && cmp -s package-lock.json "$stamp"; then return 0; fi
  npm ci --no-audit --no-fund --loglevel=error >&2
  cp package-lock.json "$stamp"
}
