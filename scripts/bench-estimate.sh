#!/usr/bin/env bash
# Benchmarks, printed beside a baseline run on the same machine:
#  - in-process: estimate (every bundled config), safetensors header parsing, planning;
#  - whole process: `memfit --version` and `memfit estimate --json` (Meta-Llama-3-70B, Kimi-K2)
#    beside a static hello-world and `python3 -c pass`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/deps.sh
ensure_packages "${MEMFIT_NATIVE_PACKAGES[@]}" python3 gcc libc6-dev

cmake --preset native-release >/dev/null
cmake --build --preset native-release --target memfit bench_estimate bench_safetensors bench_plan >&2
b=build/native-release
$b/bench/bench_estimate --benchmark_filter='Llama-3-70B|bert-base|Mixtral|DeepSeek-V3|Kimi-K2|Qwen3-Coder-480B' --benchmark_min_time=0.2
$b/bench/bench_safetensors --benchmark_min_time=0.2
$b/bench/bench_plan --benchmark_min_time=0.2

# Whole-process time: the median of N runs, in ms, beside a static hello-world (the floor of any
# process start on this machine) and `python3 -c pass` (the floor of a Python tool such as
# `accelerate estimate-memory`, before it imports torch).
runs=${RUNS:-50}
median_ms() {
  local t=()
  for _ in $(seq "$runs"); do
    local s e
    s=$(date +%s%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s%N)
    t+=($(( (e - s) / 1000 )))
  done
  printf '%s\n' "${t[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'
}
hello=$(mktemp -d)/hello
printf '#include <stdio.h>\nint main(void){puts("hello");return 0;}\n' | gcc -O2 -static -x c - -o "$hello"
cfg=examples/configs/meta-llama--Meta-Llama-3-70B.json
big=examples/configs/moonshotai--Kimi-K2-Instruct.json
hello_ms=$(median_ms "$hello")
version_ms=$(median_ms $b/native/memfit --version)
memfit_ms=$(median_ms $b/native/memfit estimate "$cfg" --json)
kimi_ms=$(median_ms $b/native/memfit estimate "$big" --json)
py=$(command -v /usr/bin/python3 || command -v python3)
python_ms=$(median_ms "$py" -c pass)
rm -rf "$(dirname "$hello")"
echo "process (median of $runs): static hello ${hello_ms} ms; memfit --version ${version_ms} ms;" \
     "memfit estimate --json Llama-3-70B ${memfit_ms} ms, Kimi-K2 (1T MoE) ${kimi_ms} ms;" \
     "python3 -c pass ${python_ms} ms"
echo "shared libraries memfit loads: $(ldd $b/native/memfit | wc -l) (libcurl only on the first Hub request)"
