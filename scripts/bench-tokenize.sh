#!/usr/bin/env bash
# Encode throughput of `memfit tokenize` against the Rust `tokenizers` library (npm, the oracle of
# tests/web/tokenizer-oracle.test.mjs) on the same text, one thread each: MB of UTF-8 encoded per
# second, load time excluded (each side times a run with the text minus a run with one line).
#   scripts/bench-tokenize.sh [TOKENIZER.json ...]   (default: the reference's four files)
# Needs a release build (cmake --build --preset native-release --target memfit) and npm ci.
set -euo pipefail
cd "$(dirname "$0")/.."
MEMFIT=${MEMFIT_CLI:-build/native-release/native/memfit}
REF=${MEMFIT_REFERENCE_DIR:-$(pwd)/../shared/reference}
[ -x "$MEMFIT" ] || { echo "no $MEMFIT: cmake --build --preset native-release --target memfit" >&2; exit 1; }
files=("$@")
[ ${#files[@]} -gt 0 ] || files=("$REF"/golden/tokenizers/{gpt2,llama3,qwen3,mistral}/tokenizer.json)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The text: the golden cases' texts (English, code, CJK, emoji, whitespace) repeated to ~8 MB,
# one JSON string per line of ~64 KB (BENCH_LINE_CHARS; long lines keep the npm binding's per-call cost small).
node -e '
const fs = require("fs");
const texts = [];
for (const d of ["gpt2", "llama3", "qwen3", "mistral"]) {
  try { for (const c of JSON.parse(fs.readFileSync(process.argv[1] + "/golden/tokenizers/" + d + "/golden.json")).cases) texts.push(c.text); } catch {}
}
if (!texts.length) texts.push("The quick brown fox jumps over the lazy dog. 你好，世界！ 😀 def f(x):\n    return x**2\n");
const lines = []; let size = 0, i = 0, line = "";
while (size < 8e6) { line += texts[i++ % texts.length] + " "; if (line.length > Number(process.argv[3])) { lines.push(JSON.stringify(line)); size += Buffer.byteLength(line); line = ""; } }
fs.writeFileSync(process.argv[2] + "/big.jsonl", lines.join("\n") + "\n");
fs.writeFileSync(process.argv[2] + "/one.jsonl", lines[0] + "\n");
' "$REF" "$work" "${BENCH_LINE_CHARS:-65536}"
bytes=$(node -e 'const fs=require("fs");let n=0;for(const l of fs.readFileSync(process.argv[1],"utf8").split("\n"))if(l)n+=Buffer.byteLength(JSON.parse(l));console.log(n)' "$work/big.jsonl")
now() { date +%s.%N; }
for f in "${files[@]}"; do
  t0=$(now); "$MEMFIT" tokenize "$f" --jsonl <"$work/one.jsonl" >/dev/null; t1=$(now)
  "$MEMFIT" tokenize "$f" --jsonl <"$work/big.jsonl" >/dev/null; t2=$(now)
  ours=$(awk -v b="$bytes" -v t0="$t0" -v t1="$t1" -v t2="$t2" 'BEGIN { print b / ((t2 - t1) - (t1 - t0)) / 1e6 }')
  theirs=$(node -e '
const { Tokenizer } = require(process.cwd() + "/node_modules/tokenizers");
const fs = require("fs");
const lines = fs.readFileSync(process.argv[2], "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
(async () => {
  const tok = Tokenizer.fromFile(process.argv[1]);
  await tok.encode(lines[0], null, { addSpecialTokens: true });
  const t = process.hrtime.bigint();
  for (const l of lines) await tok.encode(l, null, { addSpecialTokens: true });
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  console.log(Number(process.argv[3]) / s / 1e6);
})();' "$f" "$work/big.jsonl" "$bytes")
  printf '%-60s memfit %6.2f MB/s   tokenizers (npm) %6.2f MB/s   (%d bytes)\n' "$f" "$ours" "$theirs" "$bytes"
done
