#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds memfit (release) and runs it.
#   ./scripts/run.sh                      — a demo: estimates for the bundled example configs
#   ./scripts/run.sh estimate org/model   — any memfit command (needs the Hub for model ids)
#   ./scripts/run.sh serve [--port N]     — build the web page (WASM) and serve it at
#                                           http://127.0.0.1:8080 (or N)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/deps.sh
ensure_packages "${MEMFIT_NATIVE_PACKAGES[@]}"

if [ "${1:-}" = serve ]; then
  shift
  port=8080
  while [ $# -gt 0 ]; do
    case "$1" in
      --port) port=${2:?--port needs a number}; shift 2 ;;
      --port=*) port=${1#--port=}; shift ;;
      *) echo "usage: ./scripts/run.sh serve [--port N]" >&2; exit 2 ;;
    esac
  done
  ensure_web_packages
  cmake --preset wasm-release >/dev/null
  cmake --build --preset wasm-release -j "$(nproc 2>/dev/null || echo 2)" --target memfit_wasm_size >&2
  node web/tools/build.mjs --wasm build/wasm-release/wasm/dist --out build/web >&2
  exec node web/tools/serve.mjs --root build/web --port "$port"
fi

cmake --preset native-release >/dev/null
cmake --build --preset native-release -j "$(nproc 2>/dev/null || echo 2)" --target memfit >&2
memfit=build/native-release/native/memfit

if [ $# -gt 0 ]; then
  exec "$memfit" "$@"
fi
for cfg in examples/configs/*.json; do
  name=$(basename "$cfg" .json)
  name=${name/--//}
  echo "\$ memfit estimate $cfg --name $name"
  "$memfit" estimate "$cfg" --name "$name"
  echo
done
