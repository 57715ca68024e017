#!/usr/bin/env bash
# Runs every libFuzzer target for SECONDS each (default 60), in parallel, seeded with the
# committed corpus (tests/data/fuzz/<target>). New interesting inputs go to build/fuzz/corpus-*;
# crashes to build/fuzz/artifacts/. Copy a crash into tests/data/fuzz/<target>/ once fixed, so
# the replay test keeps it fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/deps.sh
ensure_packages "${MEMFIT_NATIVE_PACKAGES[@]}" clang-14 libclang-rt-14-dev

seconds=${1:-60}
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target fuzz_safetensors fuzz_index fuzz_config fuzz_torch_bin \
  fuzz_precompiled_charsmap fuzz_sentencepiece_model fuzz_gguf
mkdir -p build/fuzz/artifacts
pids=()
for t in safetensors index config torch_bin gguf precompiled_charsmap sentencepiece_model; do
  mkdir -p "build/fuzz/corpus-$t"
  ./build/fuzz/tests/fuzz_$t "build/fuzz/corpus-$t" "tests/data/fuzz/$t" \
    -max_total_time="$seconds" -timeout=120 -rss_limit_mb=4096 -max_len=65536 \
    -artifact_prefix="build/fuzz/artifacts/$t-" -print_final_stats=1 \
    >"build/fuzz/$t.log" 2>&1 &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
for t in safetensors index config torch_bin gguf precompiled_charsmap sentencepiece_model; do
  echo "== fuzz_$t"
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|ERROR|SUMMARY" "build/fuzz/$t.log" || true
done
exit $status
