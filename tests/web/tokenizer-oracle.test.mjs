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
import { precompiledTokenizers } from './support/sentencepiece-fixtures.mjs';
import { byteLevelVariants, madeUpTokenizers } from './support/tokenizer-fixtures.mjs';

const require = createRequire(join(ROOT, 'package.json'));
const TEXTS_PER_TOKENIZER = Number(process.env.MEMFIT_TOKENIZER_TEXTS || 250);

/** mulberry32: a fixed-seed generator, so a failure can be replayed. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Code point ranges assigned long ago, so the engines' differing Unicode versions agree: the
// crates the oracle uses (onig, unicode_categories, unicode-normalization) and PCRE2/utf8proc each
// carry their own tables. LATE lists the few later assignments inside these ranges (Unicode 11+).
const RANGES = [
  [0x20, 0x7e], [0xa0, 0x24f], [0x300, 0x36f], [0x370, 0x3ff], [0x400, 0x4ff], [0x590, 0x5ff], [0x600, 0x6ff],
  [0x900, 0x97f], [0xe00, 0xe5b], [0x1100, 0x11ff], [0x1e00, 0x1eff], [0x2000, 0x206f], [0x20a0, 0x20bf],
  [0x2100, 0x214f], [0x2190, 0x23ff], [0x2460, 0x24ff], [0x2500, 0x27bf], [0x3000, 0x303f], [0x3040, 0x30ff],
  [0x4e00, 0x9fa5], [0xac00, 0xd7a3], [0xf900, 0xfa2d], [0xfb00, 0xfb06], [0xfe30, 0xfe4f], [0xff01, 0xff5e],
  [0x1d400, 0x1d7ff], [0x1f300, 0x1f5ff], [0x1f600, 0x1f64f], [0x1f900, 0x1f9ff], [0x20000, 0x2a6d6],
];
const LATE = new Set([0x05ef, 0x061d]);
const WORDS = ['the', 'Hello', 'world', "don't", "it's", "we'll", "I'M", "they've", 'naïve', 'café', 'straße',
  'İstanbul', 'ΟΔΥΣΣΕΥΣ', 'ﬁne', 'Ｆｕｌｌ', '①②', 'x²', 'e\u0301', 'n\u0303o', '👨‍👩‍👧', '👍🏽', '🤗', '你好', '世界',
  'こんにちは', '안녕하세요', 'Привет', 'مرحبا', 'नमस्ते', 'hello', 'token', 'affable', 'unable', '[MASK]', '<tag>'];
const SPACES = [' ', '  ', '   ', '\t', '\n', '\n\n', '\r\n', ' \n ', '\u00a0', '\u3000', '\u0085', '\u2028', '\u200b', '\u000b', '\u180e'];
const DIGITS = ['0', '7', '42', '123', '2024', '3.14159', '1,000,000', '-17', '٣٤', '١٢٣'];

/** Random text for a tokenizer whose special-token strings are `specials`. */
function makeText(next, specials) {
  const pick = (/** @type {any[]} */ list) => list[Math.floor(next() * list.length)];
  const parts = [];
  const n = 1 + Math.floor(next() * 12);
  for (let i = 0; i < n; i++) {
    const r = next();
    if (r < 0.3) parts.push(pick(WORDS));
    else if (r < 0.45) parts.push(pick(SPACES));
    else if (r < 0.55) parts.push(pick(DIGITS));
    else if (r < 0.65 && specials.length) parts.push(pick([' ', '', '  ']) + pick(specials) + pick([' ', '', '\n']));
    else {
      let s = '';
      const len = 1 + Math.floor(next() * 6);
      for (let k = 0; k < len; k++) {
        const [lo, hi] = pick(RANGES);
        const c = lo + Math.floor(next() * (hi - lo + 1));
        if (!LATE.has(c)) s += String.fromCodePoint(c);
      }
      parts.push(s);
    }
    if (next() < 0.5) parts.push(' ');
  }
  return parts.join('');
}

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
