#!/usr/bin/env bash
# The web page's speed and size, measured in Debian's chromium on 127.0.0.1 (tests/web/bench.mjs):
# the bundle's gzipped size, the first result for a cached model, and the per-estimate time in
# WASM for Meta-Llama-3-70B, Mixtral-8x7B and DeepSeek-V3. Prints; asserts nothing. RUNS=N.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/deps.sh
ensure_web_packages
ensure_npm_packages

cmake --preset wasm-release >/dev/null
cmake --build --preset wasm-release -j "$(nproc 2>/dev/null || echo 2)" --target memfit_wasm_size >&2
node web/tools/build.mjs --wasm build/wasm-release/wasm/dist --out build/web >&2
MEMFIT_WEB_DIR=$(pwd)/build/web node tests/web/bench.mjs
