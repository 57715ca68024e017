#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds memfit (release) and runs it.
#   ./scripts/run.sh                      — a demo: estimates for the bundled example configs
#   ./scripts/run.sh estimate org/model   — any memfit command (needs the Hub for model ids)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/deps.sh
ensure_packages "${MEMFIT_NATIVE_PACKAGES[@]}"

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
