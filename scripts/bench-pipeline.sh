#!/usr/bin/env bash
# scripts/bench-pipeline.sh — pipeline-parallel generate (docs/pipeline.md, "The runtime") against
# one process, side by side in one run, on a generated ~1 GB Llama-shaped float32 checkpoint
# (hidden 2048, 4 layers, vocabulary 16,000; float32 so the blocks run on LibTorch's own kernels):
#  1. one process: decode tokens/s;
#  2. 2 local ranks (--local-ranks 2, Gloo over 127.0.0.1), one prompt: tokens/s, the time per
#     token in which no rank computes (pipeline.link_s_per_token: hops, packing, sampling), and
#     the overhead per stage boundary: (time per token with 2 ranks − with 1 process) ÷ 1 boundary;
#  3. several prompts (PROMPTS, default 2): one process runs them one after another, 2 ranks
#     micro-batch them (GPipe) — new tokens per second of wall time, prefills included;
#  4. the boundary's messages alone (scripts/bench/gloo_hops.py, torch.distributed's Gloo): a
#     decode step as three messages (memfit before packing) and as one.
#
# Usage: [NTOK=16] [THREADS=1] [PROMPTS=2] scripts/bench-pipeline.sh [WORKDIR]
# KEEP=1 keeps the checkpoint; MEMFIT=path skips the build (default: native-torch-release).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/deps.sh
ensure_packages "${MEMFIT_NATIVE_PACKAGES[@]}" "${MEMFIT_TORCH_PACKAGES[@]}" "${MEMFIT_TORCH_BENCH_PACKAGES[@]}" python3-numpy
if [ -z "${MEMFIT:-}" ]; then
  cmake --preset native-torch-release >/dev/null
  cmake --build --preset native-torch-release --target memfit memfit-torch >&2
fi
MEMFIT=${MEMFIT:-build/native-torch-release/native/memfit}
PY=/usr/bin/python3
WORK=${1:-$(mktemp -d /tmp/memfit-bench-pipeline.XXXXXX)}
mkdir -p "$WORK"
cleanup() { [ -n "${KEEP:-}" ] || rm -rf "$WORK"; }
trap cleanup EXIT
NTOK=${NTOK:-16}
THREADS=${THREADS:-1}
PROMPTS=${PROMPTS:-2}
jget() { $PY -c "import json,sys; d=json.load(open('$1')); print(d$2)"; }
calc() { $PY -c "print('%.${2:-2}f' % ($1))"; }

M=$WORK/llama-f32
[ -f "$M/model.safetensors" ] || $PY scripts/bench/make_checkpoint.py "$M" --arch llama --dtype f32 \
  --hidden 2048 --layers 4 --heads 32 --kv-heads 4 --intermediate 5632 --vocab 16000 --positions 2048 >/dev/null
echo "checkpoint $(calc "$(stat -c %s "$M/model.safetensors")/1e9") GB float32; $NTOK new tokens; --threads $THREADS per process;" \
  "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
TOKENS=1,450,4996,1735,338,1454,2989
ROWS=$TOKENS
for i in $(seq 2 "$PROMPTS"); do ROWS="$ROWS;1,$((100 * i)),$((100 * i + 7)),$((100 * i + 31)),338"; done
gen() { "$MEMFIT" generate "$M" --max-new-tokens "$NTOK" --threads "$THREADS" --json "$@"; }

gen --tokens "$TOKENS" > "$WORK/one.json"
gen --tokens "$TOKENS" --local-ranks 2 > "$WORK/two.json"
[ "$(jget "$WORK/one.json" "['new_token_ids']")" = "$(jget "$WORK/two.json" "['new_token_ids']")" ] || {
  echo "the pipeline's ids differ from one process's" >&2; exit 1; }
T1=$(jget "$WORK/one.json" "['stats']['tokens_per_s']")
T2=$(jget "$WORK/two.json" "['stats']['tokens_per_s']")
LINK=$(jget "$WORK/two.json" "['pipeline']['link_s_per_token']")
gen --tokens "$ROWS" > "$WORK/one-many.json"
gen --tokens "$ROWS" --local-ranks 2 > "$WORK/two-many.json"
M1=$(jget "$WORK/one-many.json" "['stats']['throughput_tokens_per_s']")
M2=$(jget "$WORK/two-many.json" "['stats']['throughput_tokens_per_s']")
HOPS=$($PY scripts/bench/gloo_hops.py 2048 500)

echo
echo "| run | decode tokens/s (1 prompt) | ms per token | no rank computing, per token | overhead per boundary | $PROMPTS prompts: new tokens/s (wall) |"
echo "|---|---|---|---|---|---|"
echo "| 1 process | $(calc "$T1") | $(calc "1000/$T1" 1) | — | — | $(calc "$M1") (one after another) |"
echo "| 2 local ranks (Gloo, 127.0.0.1) | $(calc "$T2") | $(calc "1000/$T2" 1) | $(calc "$LINK*1000" 2) ms | $(calc "1000/$T2 - 1000/$T1" 2) ms | $(calc "$M2") (micro-batched) |"
echo
echo "one boundary's decode-step messages alone (hidden 2048, float32; gloo_hops.py): $HOPS"
echo "per rank (2 ranks, 1 prompt): $(jget "$WORK/two.json" "['pipeline']['per_rank']")"
