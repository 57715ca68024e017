// The "will it run?" panel's prompt box in Debian's chromium against the mock Hub: the page
// fetches the model's tokenizer.json and the text module (memfit-text.wasm) only once a prompt is
// typed, and shows as many tokens as the real `tokenizers` library (npm, the oracle) gives for
// the same file and text; the count can become the estimate's context; a model without a
// tokenizer.json says so.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { openPage, settle, shot } from './support/browser.mjs';
import { startPageEnv } from './support/page-env.mjs';
import { GOLDEN, ROOT, need } from './support/paths.mjs';

const require = createRequire(join(ROOT, 'package.json'));
let env, browser;

before(async () => {
  env = await startPageEnv('wasm/memfit-text.wasm');
  ({ browser } = env);
});
after(async () => { await env?.close(); });

const url = (/** @type {Record<string, string>} */ params) => env.url(params);

/** What the oracle counts for `text` with golden/tokenizers/NAME/tokenizer.json (add_special_tokens=True). */
async function oracleCount(name, text) {
  const { Tokenizer } = require('tokenizers');
  const tok = Tokenizer.fromFile(need(join(GOLDEN, 'tokenizers', name, 'tokenizer.json'), 'the golden tokenizer'));
  return (await tok.encode(text, null, { addSpecialTokens: true })).getIds().length;
}

/** Types `text` as the prompt and waits until the count for exactly that text is shown. */
async function count(page, text) {
  await page.fill('#run-prompt', text);
  await page.waitForFunction((t) => {
    const out = document.getElementById('run-prompt-tokens');
    return document.getElementById('run-prompt').value === t && ['done', 'error'].includes(out.dataset.state || '');
  }, text);
  return page.evaluate(() => {
    const out = document.getElementById('run-prompt-tokens');
    return { state: out.dataset.state, count: out.dataset.count === undefined ? null : Number(out.dataset.count), text: out.value };
  });
}

for (const [id, name] of [['gpt2', 'gpt2'], ['meta-llama/Meta-Llama-3-70B', 'llama3']]) {
  test(`typing a prompt shows the tokenizers library's count: ${id}`, async (t) => {
    if (!existsSync(join(GOLDEN, 'tokenizers', name))) return t.skip(`golden/tokenizers/${name} not found`);
    const { page, context, problems, requests } = await openPage(browser);
    const asked = (/** @type {string} */ part) => requests.filter((u) => u.includes(part)).length;
    await page.goto(url({ model: id }));
    assert.equal(await settle(page), 'result');
    await page.click('#run summary');
    assert.equal(asked('tokenizer.json'), 0, 'no tokenizer.json before a prompt is typed');
    assert.equal(asked('memfit-text.wasm'), 0, 'no text module before a prompt is typed');
    const prompts = ['Hello world! How many tokens is this?',
      "Don't panic: 3.14159 × 42 = 131.95 — naïve café, 你好世界 👍🏽\n\n  def f(x):\n\treturn x ** 2"];
    for (const prompt of prompts) {
      const shown = await count(page, prompt);
      assert.equal(shown.state, 'done', shown.text);
      assert.equal(shown.count, await oracleCount(name, prompt), `the count of ${JSON.stringify(prompt)}`);
      assert.match(shown.text, /^[\d,]+ tokens$/);
    }
    assert.equal(asked('tokenizer.json'), 1, 'tokenizer.json is fetched once');
    assert.equal(asked('memfit-text.wasm'), 1, 'the text module is loaded once');
    // The count as the context of the estimate.
    const n = (await count(page, prompts[1])).count;
    await page.click('#run-prompt-context');
    await page.waitForFunction((c) => document.getElementById('run-context-out').value === c.toLocaleString('en-US'), n);
    await page.waitForFunction((c) => new RegExp(`Inference at context ${c.toLocaleString('en-US')} `).test(document.getElementById('run-out').innerText), n);
    await shot(page, `prompt-${name}`);
    assert.deepEqual(problems, []);
    await context.close();
  });
}

test('a model without tokenizer.json: the prompt box says so', async () => {
  const { page, context } = await openPage(browser);
  await page.goto(url({ model: 'bert-base-cased' }));
  assert.equal(await settle(page), 'result');
  await page.click('#run summary');
  const shown = await count(page, 'Hello');
  assert.equal(shown.state, 'error');
  assert.match(shown.text, /tokenizer\.json/);
  await context.close();
});
