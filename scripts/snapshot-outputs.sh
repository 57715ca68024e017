#!/usr/bin/env bash
# scripts/snapshot-outputs.sh MEMFIT OUT_DIR — every CLI output a refactor must keep byte for byte.
#
# Runs one memfit binary over examples/configs, tests/fixtures/configs, ../shared/reference's
# configs and real-hub configs, and the golden checkpoints: `estimate` (table, --json, --compat
# accelerate, a context), `plan` (three strategies, --compat accelerate), `inspect` (--json).
# Each command's stdout, stderr and exit code go to one file in OUT_DIR. Compare two snapshots
# (before and after a change) with `diff -r BEFORE AFTER`; no output means no behaviour change.
set -uo pipefail
cd "$(dirname "$0")/.."
memfit=${1:?usage: snapshot-outputs.sh MEMFIT OUT_DIR}
out=${2:?usage: snapshot-outputs.sh MEMFIT OUT_DIR}
ref=${MEMFIT_REFERENCE_DIR:-$(pwd)/../shared/reference}
mkdir -p "$out"
export HF_HUB_OFFLINE=1 MEMFIT_CACHE="$out/.cache"

run() {  # run NAME ARGS... — one output file per command
  local name=$1
  shift
  { "$memfit" "$@" 2>&1; echo "exit=$?"; } >"$out/$name.txt"
}

configs=()
for f in examples/configs/*.json tests/fixtures/configs/*.json; do configs+=("$f"); done
for f in "$ref"/configs/*/config.json "$ref"/real-hub/*/config.json; do [ -f "$f" ] && configs+=("$f"); done

for f in "${configs[@]}"; do
  case "$f" in
    "$ref"/*) id=$(basename "$(dirname "$f")") ;;
    *) id=$(basename "$f" .json) ;;
  esac
  tag=$(echo "$f" | cut -d/ -f1-2 | tr '/.' '__')-$id
  lib=()
  case "$id" in timm*) lib=(--library_name timm) ;; esac
  name=${id/--//}
  run "$tag.estimate" estimate "$f" --name "$name" "${lib[@]}"
  run "$tag.estimate-json" estimate "$f" --name "$name" "${lib[@]}" --json
  run "$tag.estimate-accelerate" estimate "$f" --name "$name" "${lib[@]}" --compat accelerate
  run "$tag.estimate-context" estimate "$f" --name "$name" "${lib[@]}" --context 8192 --batch 2 --json
  run "$tag.plan-auto" plan "$f" "${lib[@]}" --max-memory 0=8GiB,1=8GiB,cpu=32GiB --json
  run "$tag.plan-sequential" plan "$f" "${lib[@]}" --max-memory 0=4GiB,cpu=8GiB --device-map sequential --json
  run "$tag.plan-fit" plan "$f" "${lib[@]}" --max-memory 0=24GiB,cpu=64GiB --device-map fit --json
  run "$tag.plan-accelerate" plan "$f" "${lib[@]}" --max-memory 0=2GiB,cpu=4GiB --compat accelerate --json
done

for d in "$ref"/golden/*/; do
  [ -e "$d/config.json" ] || continue
  id=$(basename "$d")
  run "golden-$id.inspect" inspect "$d" --json
  run "golden-$id.estimate" estimate "$d" --json
done
echo "snapshot-outputs: $(ls "$out" | wc -l) outputs in $out"
