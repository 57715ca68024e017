#!/usr/bin/env bash
# scripts/bench-generate.sh — `memfit generate` decoding speed against the machine's bounds.
#
# A generated Llama-shaped bfloat16 checkpoint (TinyLlama-1.1B's shape: 2.2 GB) decodes NTOK
# greedy tokens:
#  1. resident on the CPU, its bf16 weights kept as stored (half_linear), vs the memory bound
#     (bytes a token reads ÷ the read bandwidth scripts/bench/membw.c measures with as many
#     threads), side by side with the same weights loaded as float32 (`--dtype float32`:
#     transformers 4.x's default, twice the bytes);
#  2. all on disk, every token reading from storage (--evict), with and without prefetch, vs the
#     I/O bound (bytes streamed per token ÷ the cold read bandwidth of cat, best of three);
#  3. peak RSS of each run.
#
# Usage: [NTOK=24] [THREADS=N] scripts/bench-generate.sh [WORKDIR]   (default: a temp folder, removed)
# KEEP=1 keeps the checkpoint; MEMFIT=path skips the build.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/deps.sh
ensure_packages "${MEMFIT_NATIVE_PACKAGES[@]}" "${MEMFIT_TORCH_PACKAGES[@]}" python3-numpy gcc libgomp1
if [ -z "${MEMFIT:-}" ]; then
  cmake --preset native-torch-release >/dev/null
  cmake --build --preset native-torch-release --target memfit memfit-torch >&2
fi
MEMFIT=${MEMFIT:-build/native-torch-release/native/memfit}
PY=/usr/bin/python3
WORK=${1:-$(mktemp -d /tmp/memfit-bench-generate.XXXXXX)}
mkdir -p "$WORK"
cleanup() { [ -n "${KEEP:-}" ] || rm -rf "$WORK"; }
trap cleanup EXIT
# Compute threads: memfit's default (one per core; one fewer while a prefetch thread reads disk
# weights) unless THREADS is set. membw reads with one thread per core.
THREAD_ARGS=()
[ -n "${THREADS:-}" ] && THREAD_ARGS=(--threads "$THREADS")
THREADS=${THREADS:-$(nproc)}
NTOK=${NTOK:-24}
ratio() { $PY -c "print('%.3f' % (($1) / ($2)))"; }
jget() { $PY -c "import json,sys; d=json.load(open('$1')); print(d$2)"; }
evict() { $PY - "$@" <<'PYEOF'
import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY); os.fsync(fd); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)
PYEOF
}
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); ratio "$t1 - $t0" 1; }

M=$WORK/llama-bf16
[ -f "$M/model.safetensors" ] || $PY scripts/bench/make_checkpoint.py "$M" --arch llama --dtype bf16 \
  --hidden 2048 --layers 22 --heads 32 --kv-heads 4 --intermediate 5632 --vocab 32000 --positions 2048
ST=$M/model.safetensors
BYTES=$(stat -c %s "$ST")
# Bytes a decoding step reads: every weight once, except the embedding table, of which one row.
PER_TOKEN=$($PY -c "
import json, struct
f = open('$ST', 'rb'); n = struct.unpack('<Q', f.read(8))[0]; h = json.loads(f.read(n))
e = h['model.embed_tokens.weight']; eb = e['data_offsets'][1] - e['data_offsets'][0]
print($BYTES - 8 - n - eb + eb // e['shape'][0])")
gcc -O3 -march=native -fopenmp scripts/bench/membw.c -o "$WORK/membw"
echo "checkpoint $(ratio "$BYTES" 1e9) GB bf16; a token reads $(ratio "$PER_TOKEN" 1e9) GB"
TOKENS=1,450,4996,17354,338,1454,29892
run() {  # run NAME ARGS... — decode NTOK tokens; prints tokens/s and peak RSS, returns the JSON in $WORK/gen.json
  local name=$1; shift
  "$MEMFIT" generate "$M" --tokens "$TOKENS" --max-new-tokens "$NTOK" "${THREAD_ARGS[@]}" --json "$@" > "$WORK/gen.json"
  TPS=$(jget "$WORK/gen.json" "['stats']['tokens_per_s']")
  printf "%-40s %8.2f tokens/s  prefill %6.2f s  peak RSS %6.0f MB  %s streamed/token\n" "$name ($(jget "$WORK/gen.json" "['threads']") threads)" "$TPS" \
    "$(jget "$WORK/gen.json" "['stats']['prefill_s']")" "$(ratio "$(jget "$WORK/gen.json" "['stats']['peak_rss_bytes']")" 1e6)" \
    "$(ratio "$(jget "$WORK/gen.json" "['stats']['bytes_streamed_per_token']")" 1e6) MB"
}
echo "== 1. resident on the CPU"
# A shared VM's memory bandwidth moves with its neighbours: measured right before and right after
# each resident run, and the larger kept (the strictest bound).
resident() {  # resident NAME BYTES_PER_TOKEN ARGS...
  local name=$1 per=$2 before after bound
  shift 2
  before=$("$WORK/membw" "$THREADS" 2>/dev/null)
  run "$name" "$@"
  after=$("$WORK/membw" "$THREADS" 2>/dev/null)
  bound=$(ratio "max($before, $after) * 1e9" "$per")
  echo "  memory read bandwidth ($THREADS threads) before/after: $before/$after GB/s → bound $bound tokens/s; achieved / bound: $(ratio "$TPS" "$bound")"
}
resident "bf16 kept as stored" "$PER_TOKEN"
resident "--dtype float32 (upcast at load)" "2 * $PER_TOKEN" --dtype float32

echo "== 2. all on disk, every token read from storage (--evict)"
BW=0
for _ in 1 2 3; do evict "$ST"; B=$(ratio "$BYTES" "$(secs cat "$ST")"); BW=$($PY -c "print(max($BW, $B))"); done
echo "cold read bandwidth (cat, best of 3): $(ratio "$BW" 1e9) GB/s"
for pf in "" --no-prefetch; do
  evict "$ST"
  run "disk ${pf:-prefetch}" --device-map '{"": "disk"}' --evict $pf
  PER=$(jget "$WORK/gen.json" "['stats']['bytes_streamed_per_token']")
  IO=$(ratio "$BW" "$PER")
  echo "  I/O bound $IO tokens/s (achieved / bound: $(ratio "$TPS" "$IO")); the reads' own speed: $(jget "$WORK/gen.json" "['stats']['io_bound_tokens_per_s']") tokens/s"
done
