#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and passes every test: the debug build with the whole ctest
# suite (reference parity included, when ../shared/reference exists), then the same suite under
# AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/deps.sh
ensure_packages "${MEMFIT_NATIVE_PACKAGES[@]}"

jobs=$(nproc 2>/dev/null || echo 2)
export MEMFIT_REFERENCE_DIR=${MEMFIT_REFERENCE_DIR:-$(pwd)/../shared/reference}
[ -d "$MEMFIT_REFERENCE_DIR" ] || echo "*** memfit: no reference data at $MEMFIT_REFERENCE_DIR: parity tests will be SKIPPED ***" >&2

for preset in native-debug native-asan; do
  echo "=== $preset ==="
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  ctest --preset "$preset" -j "$jobs"
done
