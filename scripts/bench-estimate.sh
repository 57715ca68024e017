#!/usr/bin/env bash
# Benchmarks, printed beside a baseline run on the same machine:
#  - in-process: estimate (every bundled config), safetensors header parsing, planning;
#  - whole process: `memfit estimate --json` on Meta-Llama-3-70B vs `python3 -c pass` (the
#    floor of any Python tool such as `accelerate estimate-memory`, before it imports torch).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/deps.sh
ensure_packages "${MEMFIT_NATIVE_PACKAGES[@]}" python3 bc

cmake --preset native-release >/dev/null
cmake --build --preset native-release --target memfit bench_estimate bench_safetensors bench_plan >&2
b=build/native-release
$b/bench/bench_estimate --benchmark_filter='Llama-3-70B|bert-base|Mixtral|DeepSeek-V3' --benchmark_min_time=0.2
$b/bench/bench_safetensors --benchmark_min_time=0.2
$b/bench/bench_plan --benchmark_min_time=0.2

# Whole-process time: mean of N runs, in ms.
runs=${RUNS:-30}
mean_ms() {
  local start end
  start=$(date +%s%N)
  for _ in $(seq "$runs"); do "$@" >/dev/null 2>&1; done
  end=$(date +%s%N)
  echo "scale=2; ($end - $start) / 1000000 / $runs" | bc
}
cfg=examples/configs/meta-llama--Meta-Llama-3-70B.json
memfit_ms=$(mean_ms $b/native/memfit estimate "$cfg" --json)
py=$(command -v /usr/bin/python3 || command -v python3)
python_ms=$(mean_ms "$py" -c pass)
echo "process: memfit estimate --json (Llama-3-70B) ${memfit_ms} ms; python3 -c pass ${python_ms} ms;" \
     "ratio $(echo "scale=3; $memfit_ms / $python_ms" | bc)"
