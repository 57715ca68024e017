#!/usr/bin/env bash
# The multi-node "paper plan" of docs/pipeline.md: `memfit plan --nodes` for Llama-3-70B and
# DeepSeek-V3 on 2, 4 and 8 hosts at 10 and 100 Gb/s, as a Markdown table. Estimates only (a
# roofline per stage, see docs/pipeline.md); nothing is run on the hosts.
#   scripts/paper-plan.sh [path/to/memfit]   (default: the native-release build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
memfit=${1:-$root/build/native-release/native/memfit}
[[ -x $memfit ]] || { echo "no memfit at $memfit (build the native-release preset or pass its path)" >&2; exit 1; }

hosts() {  # hosts N BUDGETS → "host1=BUDGETS;host2=BUDGETS;…"
  local n=$1 spec=$2 out=""
  for ((i = 1; i <= n; i++)); do out+="${out:+;}host$i=$spec"; done
  printf '%s' "$out"
}

row() {  # row MODEL_LABEL CONFIG HOST_LABEL BUDGETS DTYPE N LINK
  local json
  json=$("$memfit" plan "$2" --nodes "$(hosts "$6" "$4")" --link "$7" --device-map fit --dtype "$5" \
         --context 4096 --batch 8 --json)
  PLAN_JSON=$json python3 - "$1" "$3" "$6" "$7" <<'PY'
import json, os, sys
label, host, n, link = sys.argv[1:5]
p = json.loads(os.environ["PLAN_JSON"])
streamed = sum(x["plan"]["streamed_bytes"] for x in p["nodes"])
print(f"| {label} | {n} × {host} | {link} | {p['bytes_per_boundary'] / p['batch'] / 1024:.0f} KiB | "
      f"{streamed / 2**30:.1f} GiB | {p['link_s_per_step'] * 1e3:.2f} ms | {p['decode_tokens_per_s']:.1f} | "
      f"{p['pipelined_tokens_per_s']:.1f} |")
PY
}

echo "| model | hosts | link | sent per token per boundary | streamed per step | link per step (batch 8) | decode tokens/s (batch 8, stages in turn) | pipelined tokens/s (batch 8, micro-batches) |"
echo "|---|---|---|---|---|---|---|---|"
llama=$root/../shared/reference/configs/Meta-Llama-3-70B/config.json
[[ -f $llama ]] || llama=meta-llama/Meta-Llama-3-70B
deepseek=$root/tests/fixtures/configs/deepseek-ai--DeepSeek-V3.json
for n in 2 4 8; do
  for link in 10Gbps 100Gbps; do
    row "Llama-3-70B bf16" "$llama" "(2× RTX 4090, 64 GiB)" "0:24GiB,1:24GiB,cpu:64GiB,gpu:RTX 4090" bfloat16 "$n" "$link"
  done
done
for n in 2 4 8; do
  for link in 10Gbps 100Gbps; do
    row "DeepSeek-V3 fp8" "$deepseek" "(8× H100 80GB, 1 TiB)" \
      "0:80GiB,1:80GiB,2:80GiB,3:80GiB,4:80GiB,5:80GiB,6:80GiB,7:80GiB,cpu:1TiB,gpu:H100 SXM" float8_e4m3fn "$n" "$link"
  done
done
