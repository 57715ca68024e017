#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and passes every test, in three stages:
#   1. native-torch: a Debug build of what needs LibTorch — the CLI, the LibTorch loader
#      (memfit-torch) and its suite (ctest label torch: golden logits, load/forward end to end);
#   2. native-asan: core and the CLI under AddressSanitizer + UndefinedBehaviorSanitizer, with
#      every other test (core, CLI, fuzz replays; reference parity included, when
#      ../shared/reference exists);
#   3. web: the WebAssembly build (the core tests again, under node) and the page's browser tests
#      (node --test + playwright-core + chromium) — scripts/lib/web-tests.sh.
# Each native test runs once, in the stage that can run it with the most checks: the core and CLI
# suites under the sanitizers, the LibTorch suite without them (LibTorch itself is not built
# with them). `ctest --preset native-torch` still runs everything in one build.
# MEMFIT_SKIP_WEB=1 leaves stage 3 out for a quick local run; CI (.ci/run) runs all three.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/deps.sh
. scripts/lib/web-tests.sh
ensure_packages "${MEMFIT_NATIVE_PACKAGES[@]}" "${MEMFIT_TORCH_PACKAGES[@]}"

jobs=$(nproc 2>/dev/null || echo 2)
export MEMFIT_REFERENCE_DIR=${MEMFIT_REFERENCE_DIR:-$(pwd)/../shared/reference}
[ -d "$MEMFIT_REFERENCE_DIR" ] || echo "*** memfit: no reference data at $MEMFIT_REFERENCE_DIR: parity tests will be SKIPPED ***" >&2

# What the parity suites compared (their MESSAGE lines, from ctest's log). With the reference data
# present, a run where they compared nothing fails.
report_parity() {
  local log="$1/Testing/Temporary/LastTest.log"
  local lines
  lines=$(grep -ho "[a-z]* parity: [^\"]*compared" "$log" 2>/dev/null | sort -u || true)
  echo "${lines:-no parity lines in $log}"
  if [ -d "$MEMFIT_REFERENCE_DIR" ] && ! grep -q "accelerate parity: .* cases" <<<"$lines"; then
    echo "*** memfit: the reference data is present but the parity suites compared nothing ***" >&2
    return 1
  fi
}

start=$SECONDS
t=$SECONDS
echo "=== native-torch: the LibTorch suite ==="
cmake --preset native-torch >/dev/null
cmake --build --preset native-torch -j "$jobs" --target memfit_torch_tests
ctest --preset native-torch -j "$jobs" -L torch --no-tests=error
echo "--- native-torch: $((SECONDS - t)) s"

t=$SECONDS
echo "=== native-asan: core, CLI and fuzz replays under ASan + UBSan ==="
cmake --preset native-asan >/dev/null
cmake --build --preset native-asan -j "$jobs"
ctest --preset native-asan -j "$jobs" --no-tests=error
report_parity build/native-asan
echo "--- native-asan: $((SECONDS - t)) s"

if [ "${MEMFIT_SKIP_WEB:-0}" = 1 ]; then
  echo "*** MEMFIT_SKIP_WEB=1: the wasm-release + web stage was not run ***"
  exit 0
fi
echo "=== wasm-release + web ==="
MEMFIT_CLI=$(pwd)/build/native-torch/native/memfit run_web_tests "$jobs"
echo "--- all stages: $((SECONDS - start)) s"
