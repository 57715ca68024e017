// The page's text module (memfit-text.wasm: core's tokenizer over the portable text backend, its
// own regex engine and Unicode tables) against the real Hugging Face `tokenizers` library (npm
// `tokenizers`, the Rust library's Node bindings, whose regexes are Oniguruma's): ids of the same
// tokenizer.json files on generated text must be equal — the four real files of the reference
// data, the made-up ones covering the other components, and GPT-2 with other models'
// pre-tokenizer regexes. Errors come back as {error: {code, message}}. A run that compares
// nothing fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { GOLDEN, ROOT } from './support/paths.mjs';
import { makeText, rng } from './support/generated-text.mjs';
import { byteLevelVariants, madeUpTokenizers, splitVariants } from './support/tokenizer-fixtures.mjs';
import { wasm } from './support/wasm.mjs';

const require = createRequire(join(ROOT, 'package.json'));
const TEXTS_PER_TOKENIZER = Number(process.env.MEMFIT_TOKENIZER_TEXTS || 60);

/** @returns {Promise<[string, string][]>} [name, tokenizer.json text] */
function tokenizerFiles() {
  /** @type {[string, string][]} */
  const files = [];
  for (const name of ['gpt2', 'llama3', 'qwen3', 'mistral']) {
    const f = join(GOLDEN, 'tokenizers', name, 'tokenizer.json');
    if (existsSync(f)) files.push([name, readFileSync(f, 'utf8')]);
    else console.error(`*** SKIPPED: ${f} not found (set MEMFIT_REFERENCE_DIR): ${name} not compared ***`);
  }
  const made = madeUpTokenizers();
  const gpt2 = files.find(([n]) => n === 'gpt2');
  if (gpt2) {
    const real = JSON.parse(gpt2[1]);
    made.push(...byteLevelVariants(real), ...splitVariants(real));
  }
  for (const [name, obj] of made) files.push([name, JSON.stringify(obj)]);
  return Promise.resolve(files);
}

test('memfit-text tokenize() gives the ids of the Rust tokenizers library', async (t) => {
  let Tokenizer;
  try {
    ({ Tokenizer } = require('tokenizers'));
  } catch (e) {
    assert.fail(`npm tokenizers (the oracle) is not installed: npm ci (${e.message})`);
  }
  const m = (await wasm('memfit-text.mjs')).raw;
  let total = 0;
  let seed = Number(process.env.MEMFIT_TOKENIZER_SEED || 29);
  for (const [name, json] of await tokenizerFiles()) {
    await t.test(name, async () => {
      const oracle = Tokenizer.fromString(json);
      const specials = (JSON.parse(json).added_tokens || []).map((x) => x.content).slice(0, 12);
      const next = rng(seed++);
      const texts = ['', ' ', '  \n\t ', specials.join(' ')];
      for (let i = 0; i < TEXTS_PER_TOKENIZER; i++) texts.push(makeText(next, specials));
      for (const text of texts) {
        const ours = JSON.parse(m.tokenize(json, text));
        const theirs = (await oracle.encode(text, null, { addSpecialTokens: true })).getIds();
        assert.equal(ours.error, undefined, `${name}: ${JSON.stringify(text)}: ${JSON.stringify(ours.error)}`);
        assert.deepEqual(ours.ids, theirs, `${name}: ids of ${JSON.stringify(text)}`);
        assert.equal(ours.count, theirs.length);
        total++;
      }
    });
  }
  console.log(`text module: ${total} texts compared with the tokenizers library`);
  assert.ok(total >= 4 * TEXTS_PER_TOKENIZER, `only ${total} texts compared`);
});

test('memfit-text tokenize() errors: an unsupported regex is named, a broken file says where; tokenize_again()', async () => {
  const m = (await wasm('memfit-text.mjs')).raw;
  const lookbehind = JSON.stringify({
    version: '1.0', added_tokens: [], normalizer: null, post_processor: null, decoder: null,
    pre_tokenizer: { type: 'Split', pattern: { Regex: '(?<=a)b' }, behavior: 'Isolated', invert: false },
    model: { type: 'WordLevel', vocab: { '[UNK]': 0 }, unk_token: '[UNK]' },
  });
  const e = JSON.parse(m.tokenize(lookbehind, 'ab')).error;
  assert.equal(e.code, 'invalid_value');
  assert.match(e.message, /the regex '\(\?<=a\)b' is not supported by memfit's portable regex engine: a lookbehind/);
  assert.equal(JSON.parse(m.tokenize('{"model": 1', 'x')).error.code, 'invalid_json');
  // tokenize_again: the last file read, not passed again; none read yet is an error.
  const fresh = (await wasm('memfit-text.mjs')).raw;
  assert.equal(JSON.parse(fresh.tokenize_again('x')).error.code, 'invalid_argument');
  const [[, json]] = (await tokenizerFiles()).filter(([n]) => n === 'bert-wordpiece');
  const once = JSON.parse(fresh.tokenize(json, 'hello world, the token'));
  assert.ok(once.count > 2, JSON.stringify(once));
  assert.deepEqual(JSON.parse(fresh.tokenize_again('hello world, the token')), once);
  assert.ok(JSON.parse(m.tokenize('{}', 'x')).error.message.includes('model'));
});
