#!/usr/bin/env bash
# The web page's speed and size, measured in Debian's chromium on 127.0.0.1 (tests/web/bench.mjs):
# the bundle's gzipped size, the first result for a cached model, and the per-estimate time in
# WASM for Meta-Llama-3-70B, Mixtral-8x7B and DeepSeek-V3. Prints; asserts nothing. RUNS=N;
# HUB_LATENCY_MS=N: the mock Hub answers after N ms (a real network's round trips; default 0).
# BUSY_CORES=N: N processes spin throughout (a machine busy with something else; default 0).
# The first visit and the cached first result are measured beside a baseline in the same run:
# BASELINE_REF's web/ (default: the commit before issue 20's first-visit work) assembled with
# BASELINE_WASM (default: this build's modules) — or BASELINE_WEB_DIR, any assembled site.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/deps.sh
ensure_web_packages
ensure_npm_packages

cmake --preset wasm-release >/dev/null
cmake --build --preset wasm-release -j "$(nproc 2>/dev/null || echo 2)" --target memfit_wasm_size >&2
node web/tools/build.mjs --wasm build/wasm-release/wasm/dist --out build/web >&2
if [ -z "${BASELINE_WEB_DIR:-}" ]; then
  base=build/bench-baseline
  rm -rf "$base"
  mkdir -p "$base/src"
  git archive "${BASELINE_REF:-69ce125}" web | tar -x -C "$base/src"
  node "$base/src/web/tools/build.mjs" --wasm "${BASELINE_WASM:-build/wasm-release/wasm/dist}" --out "$base/web" >&2
  BASELINE_WEB_DIR=$(pwd)/$base/web
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)" >&2
MEMFIT_WEB_DIR=$(pwd)/build/web MEMFIT_BASELINE_WEB_DIR=$BASELINE_WEB_DIR node tests/web/bench.mjs
