// `memfit tokenize` against the real Hugging Face `tokenizers` library (npm `tokenizers`, the Rust
// library's Node bindings) on generated text: random Unicode (astral, emoji and ZWJ sequences,
// CJK, combining marks, scripts), whitespace runs, digits, contractions, and the tokenizer's own
// special-token strings embedded. For the real tokenizer.json files of the reference data (GPT-2,
// Llama 3, Qwen3, Mistral), made-up ones covering every other component
// (support/tokenizer-fixtures.mjs) and Precompiled ones with sentencepiece's own rules
// (support/sentencepiece-fixtures.mjs): ids and tokens with and without special tokens, and decode
// of the oracle's ids with and without skipping special tokens, must all be equal.
// A run that compares nothing fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, GOLDEN, ROOT } from './support/paths.mjs';
import { makeText, rng } from './support/generated-text.mjs';
import { precompiledTokenizers } from './support/sentencepiece-fixtures.mjs';
import { byteLevelVariants, madeUpTokenizers } from './support/tokenizer-fixtures.mjs';

const require = createRequire(join(ROOT, 'package.json'));
const TEXTS_PER_TOKENIZER = Number(process.env.MEMFIT_TOKENIZER_TEXTS || 250);

/** `memfit tokenize PATH --jsonl [flags]` over `lines`; one parsed JSON value per line. */
function memfitJsonl(path, lines, flags) {
  const out = execFileSync(CLI, ['tokenize', path, '--jsonl', ...flags], {
    input: lines.map((l) => JSON.stringify(l)).join('\n') + '\n', maxBuffer: 1 << 28, encoding: 'utf8',
  });
  const rows = out.split('\n').filter((l) => l.length);
  assert.equal(rows.length, lines.length, `memfit printed ${rows.length} lines for ${lines.length}`);
  return rows.map((l) => JSON.parse(l));
}

/** Compares memfit with the oracle on one tokenizer.json; returns the number of comparisons. */
async function compare(name, file, seed, Tokenizer) {
  const tok = Tokenizer.fromFile(file);
  const json = JSON.parse(readFileSync(file, 'utf8'));
  const specials = (json.added_tokens || []).map((t) => t.content).slice(0, 12);
  const next = rng(seed);
  const texts = [];
  for (let i = 0; i < TEXTS_PER_TOKENIZER; i++) texts.push(makeText(next, specials));
  texts.push('', ' ', '  \n\t ', specials.join(' '));
  let compared = 0;
  for (const addSpecial of [true, false]) {
    const ours = memfitJsonl(file, texts, addSpecial ? [] : ['--no-special']);
    const theirs = [];
    for (const t of texts) theirs.push(await tok.encode(t, null, { addSpecialTokens: addSpecial }));
    for (let i = 0; i < texts.length; i++) {
      const what = `${name}: ${JSON.stringify(texts[i])} (add_special_tokens=${addSpecial})`;
      assert.deepEqual(ours[i].ids, theirs[i].getIds(), `ids of ${what}`);
      assert.deepEqual(ours[i].tokens, theirs[i].getTokens(), `tokens of ${what}`);
      compared++;
    }
    const ids = theirs.map((e) => e.getIds());
    for (const skip of [false, true]) {
      const decoded = memfitJsonl(file, ids, ['--decode', ...(skip ? ['--no-special'] : [])]);
      for (let i = 0; i < ids.length; i++) {
        const expected = await tok.decode(ids[i], skip);
        assert.equal(decoded[i].text, expected, `${name}: decode(${JSON.stringify(ids[i])}, skip_special=${skip}) of ${JSON.stringify(texts[i])}`);
        compared++;
      }
    }
  }
  return compared;
}

test('memfit tokenize equals the Rust tokenizers library on generated text', async (t) => {
  assert.ok(existsSync(CLI), `no native CLI at ${CLI} (set MEMFIT_CLI)`);
  let Tokenizer;
  try {
    ({ Tokenizer } = require('tokenizers'));
  } catch (e) {
    assert.fail(`npm tokenizers (the oracle) is not installed: npm ci (${e.message})`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'memfit-tok-'));
  const files = [];
  for (const name of ['gpt2', 'llama3', 'qwen3', 'mistral']) {
    const f = join(GOLDEN, 'tokenizers', name, 'tokenizer.json');
    if (existsSync(f)) files.push([name, f]);
    else console.error(`*** SKIPPED: ${f} not found (set MEMFIT_REFERENCE_DIR): ${name} not compared ***`);
  }
  const gpt2 = files.find(([n]) => n === 'gpt2');
  const made = madeUpTokenizers();
  if (gpt2) made.push(...byteLevelVariants(JSON.parse(readFileSync(gpt2[1], 'utf8'))));
  made.push(...precompiledTokenizers(dir));
  for (const [name, obj] of made) {
    const f = join(dir, `${name}.json`);
    writeFileSync(f, JSON.stringify(obj));
    files.push([name, f]);
  }
  let total = 0;
  let seed = Number(process.env.MEMFIT_TOKENIZER_SEED || 17);
  // MEMFIT_TOKENIZER_ONLY=REGEX compares only the tokenizers whose name matches (for debugging).
  const only = process.env.MEMFIT_TOKENIZER_ONLY ? new RegExp(process.env.MEMFIT_TOKENIZER_ONLY) : null;
  for (const [name, file] of files) {
    if (only && !only.test(name)) continue;
    await t.test(name, async () => {
      const n = await compare(name, file, seed++, Tokenizer);
      assert.ok(n > 0, `${name}: nothing compared`);
      total += n;
    });
  }
  console.log(`tokenizer parity: ${total} comparisons over ${files.length} tokenizers`);
  assert.ok(total > 0, 'nothing was compared');
});
