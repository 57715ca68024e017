// The page in Debian's chromium against the mock Hub (tests/web/support/mock-hub.mjs): the
// numbers are the CLI's, every Hub failure is explained, exact mode reads headers by Range,
// the token never leaves the Hub's origin, offline and dropped files work, share links restore
// the state, and hostile strings stay text. Screenshots go to build/web-tests/screenshots.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMockHub, TOKEN, XSS } from './support/mock-hub.mjs';
import { errorOf, openPage, pageJson, settle, shot } from './support/browser.mjs';
import { cliJson, memfit } from './support/cli.mjs';
import { startPageEnv } from './support/page-env.mjs';
import { CONFIGS, GOLDEN } from './support/paths.mjs';
import { wasm } from './support/wasm.mjs';
import { existsSync } from 'node:fs';

let env, hub, site, browser;
const CLOSED = 'http://127.0.0.1:9'; // discard port: nothing listens, connections are refused

before(async () => {
  env = await startPageEnv();
  ({ hub, site, browser } = env);
});
after(async () => { await env?.close(); });

const url = (/** @type {Record<string, string>} */ params) => env.url(params);

describe('repeated modules', () => {
  test('identical layers and experts are one row each, marked with how many they stand for', async () => {
    const { page, problems, context } = await openPage(browser);
    await page.goto(url({ model: 'mistralai/Mixtral-8x7B-v0.1' }));
    assert.equal(await settle(page), 'result', JSON.stringify(await errorOf(page)));
    const report = await pageJson(page);
    const config = JSON.parse(readFileSync(join(CONFIGS, 'mistralai--Mixtral-8x7B-v0.1.json'), 'utf8'));
    assert.equal(report.module_repeats['model.layers.0'], config.num_hidden_layers);
    assert.equal(report.module_repeats['model.layers.0.block_sparse_moe.experts.0'], config.num_local_experts);
    assert.equal(report.module_sizes['model.layers.1'], undefined, 'copies are not listed');
    await page.selectOption('#module-depth', '3');
    await page.waitForFunction((n) => document.querySelector('.module-sizes').textContent.includes(`1 of ${n} alike`), config.num_hidden_layers);
    await page.selectOption('#module-depth', '6');
    const expected = config.num_hidden_layers * config.num_local_experts;
    await page.waitForFunction((n) => document.querySelector('.module-sizes').textContent.includes(`1 of ${n} alike`), expected);
    assert.deepEqual(problems, []);
    await context.close();
  });
});

describe('numbers', () => {
  const models = ['bert-base-cased', 'gpt2', 'meta-llama/Meta-Llama-3-70B', 'mistralai/Mixtral-8x7B-v0.1',
    'google/flan-t5-base', 'timm/resnet50.a1_in1k', 'openai/whisper-tiny'];
  for (const id of models) {
    test(`the page's numbers are the CLI's: ${id}`, async () => {
      const { page, problems, context } = await openPage(browser);
      await page.goto(url({ model: id }));
      assert.equal(await settle(page), 'result', JSON.stringify(await errorOf(page)));
      assert.deepEqual(await pageJson(page), await cliJson([id], { endpoint: hub.url }), 'memfit mode');
      await page.check('input[name=mode][value=accelerate]');
      await page.waitForFunction(() => document.querySelector('.facts') && /accelerate/.test(location.search));
      await page.waitForFunction(() => !/bfloat16/.test(document.querySelector('pre.table').textContent));
      const cli = await memfit(['estimate', id, '--compat', 'accelerate'], { endpoint: hub.url });
      assert.equal(cli.code, 0, cli.stderr);
      assert.equal(await page.locator('pre.table').textContent() + '\n', cli.stdout, 'accelerate table');
      assert.deepEqual(await pageJson(page), await cliJson([id, '--compat', 'accelerate'], { endpoint: hub.url }));
      if (id === 'meta-llama/Meta-Llama-3-70B') await shot(page, 'result-accelerate');
      assert.deepEqual(problems, []);
      await context.close();
    });
  }

  test('dtypes chosen on the page are the CLI --dtypes', async () => {
    const { page, context } = await openPage(browser);
    await page.goto(url({ model: 'mistralai/Mistral-7B-v0.1', dtypes: 'float16,int4' }));
    assert.equal(await settle(page), 'result');
    assert.deepEqual(await pageJson(page), await cliJson(['mistralai/Mistral-7B-v0.1', '--dtypes', 'float16', 'int4'], { endpoint: hub.url }));
    await context.close();
  });
});

describe('Hub errors', () => {
  test('a gated model: explained without a token, computed with one; the token stays on the Hub', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(url({ model: 'memfit-test/gated-llama' }));
    assert.equal(await settle(page), 'error');
    const e = await errorOf(page);
    assert.equal(e.kind, 'gated');
    assert.match(e.text, /Gated model/);
    assert.match(e.text, /token/i);
    await shot(page, 'error-gated');
    await page.fill('#token', TOKEN);
    await page.click('#go');
    await page.waitForFunction(() => !document.getElementById('results').hidden);
    const r = await pageJson(page);
    assert.equal(r.model_type, 'llama');
    const authed = hub.log.filter((l) => l.auth);
    assert.ok(authed.length > 0 && authed.every((l) => l.auth === `Bearer ${TOKEN}`));
    assert.ok(!page.url().includes(TOKEN), 'the token is not in the URL');
    assert.equal(await page.evaluate(() => Object.keys(localStorage).length), 0, 'not remembered unless asked');
    assert.deepEqual(problems.filter((p) => !/401|403/.test(p)), []);
    await context.close();
  });

  test('a wrong token: still gated (HTTP 403)', async () => {
    const { page, context } = await openPage(browser);
    await page.goto(url({ model: 'memfit-test/gated-llama' }));
    await settle(page);
    await page.fill('#token', 'hf_wrong');
    await page.click('#go');
    await page.waitForFunction(() => /HTTP 403/.test(document.getElementById('error').innerText));
    assert.equal((await errorOf(page)).kind, 'gated');
    await context.close();
  });

  const cases = [
    ['memfit-test/does-not-exist', 'repo_not_found', /does not exist/],
    ['memfit-test/no-config', 'entry_not_found', /config\.json/],
    ['memfit-test/no-library', 'no_library', /library/],
    ['memfit-test/diffusers-model', 'unsupported_library', /diffusers/],
    ['memfit-test/unknown-arch', 'unknown_model_type', /Unsupported architecture/],
  ];
  for (const [id, kind, re] of cases) {
    test(`${kind}: ${id}`, async () => {
      const { page, context } = await openPage(browser);
      await page.goto(url({ model: id }));
      assert.equal(await settle(page), 'error');
      const e = await errorOf(page);
      assert.equal(e.kind, kind, e.text);
      assert.match(e.text, re);
      if (kind === 'repo_not_found') await shot(page, 'error-not-found');
      await context.close();
    });
  }

  test('no library on the Hub: choosing one computes', async () => {
    const { page, context } = await openPage(browser);
    await page.goto(url({ model: 'memfit-test/no-library', library: 'transformers' }));
    assert.equal(await settle(page), 'result');
    await context.close();
  });

  test('a slow Hub times out with a message', async () => {
    const { page, context } = await openPage(browser);
    await page.goto(`${url({ model: 'memfit-test/slow' })}&timeout=800`);
    assert.equal(await settle(page), 'error');
    const e = await errorOf(page);
    assert.equal(e.kind, 'timeout');
    assert.match(e.text, /did not answer within 1 s/);
    await context.close();
  });

  test('a new input cancels the fetch in flight', async () => {
    const { page, context } = await openPage(browser);
    await page.goto(url({ model: 'memfit-test/slow' }));
    await page.waitForFunction(() => /Asking|Fetching/.test(document.getElementById('status').textContent));
    await page.locator('#model').pressSequentially('x');
    await page.waitForFunction(() => document.getElementById('status').textContent === 'Cancelled.');
    // The Hub saw the page close the slow request unanswered: no late answer can reach the page.
    await hub.aborted('memfit-test/slow');
    assert.equal(await page.evaluate(() => document.getElementById('error').hidden), true);
    await context.close();
  });

  test('a new model stops a long computation in the worker', async () => {
    const { page, context, problems } = await openPage(browser);
    // DeepSeek-V3 (61 layers × 256 experts) takes core seconds natively, minutes in WASM
    await page.goto(url({ model: 'deepseek-ai/DeepSeek-V3' }));
    await page.waitForFunction(() => /^Computing/.test(document.getElementById('status').textContent));
    await page.fill('#model', 'gpt2');
    await page.press('#model', 'Enter');
    // gpt2's result, not DeepSeek-V3's (had that one finished before the new input)
    await page.waitForFunction(() => !document.getElementById('results').hidden &&
      document.getElementById('results-title')?.textContent === 'gpt2', null, { timeout: 20000 });
    assert.equal((await pageJson(page)).name, 'gpt2');
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('an unreachable Hub: a network error, or the catalog for a catalog model', async () => {
    const { page, context } = await openPage(browser);
    await page.goto(`${site.url}/?model=memfit-test/anything&endpoint=${encodeURIComponent(CLOSED)}`);
    assert.equal(await settle(page), 'error');
    const e = await errorOf(page);
    assert.equal(e.kind, 'network');
    assert.match(e.text, /CORS/);
    await page.fill('#model', 'gpt2');
    await page.click('#go');
    await page.waitForFunction(() => !document.getElementById('results').hidden);
    assert.match(await page.locator('#report').innerText(), /bundled catalog/);
    await context.close();
  });
});

describe('exact mode', () => {
  for (const id of ['memfit-test/tiny-llama-sharded', 'memfit-test/tiny-gpt2']) {
    test(`safetensors headers by HTTP Range, as the CLI's --exact: ${id}`, async (t) => {
      if (!existsSync(GOLDEN)) { t.skip('*** SKIPPED: no reference golden data ***'); return; }
      const { page, context } = await openPage(browser);
      const start = hub.log.length;
      await page.goto(url({ model: id, source: 'exact' }));
      assert.equal(await settle(page), 'result', JSON.stringify(await errorOf(page)));
      const r = await pageJson(page);
      assert.equal(r.source, 'checkpoint');
      assert.deepEqual(r, await cliJson([id, '--exact'], { endpoint: hub.url }));
      const ranged = hub.log.slice(start).filter((l) => l.range);
      assert.ok(ranged.length >= 1 && ranged.every((l) => l.path.endsWith('.safetensors') && /^bytes=0-65535$/.test(l.range)), JSON.stringify(ranged));
      assert.match(await page.locator('#report').innerText(), /by HTTP Range/);
      if (id.endsWith('sharded')) await shot(page, 'result-exact');
      await context.close();
    });
  }

  for (const id of ['memfit-test/no-range', 'memfit-test/range-200']) {
    test(`a server that ignores Range or answers it with 200 is read as far as needed, as the CLI does: ${id}`, async (t) => {
      if (!existsSync(GOLDEN)) { t.skip('*** SKIPPED: no reference golden data ***'); return; }
      const { page, context } = await openPage(browser);
      await page.goto(url({ model: id, source: 'exact' }));
      assert.equal(await settle(page), 'result', JSON.stringify(await errorOf(page)));
      const r = await pageJson(page);
      assert.equal(r.source, 'checkpoint');
      assert.deepEqual(r, await cliJson([id, '--exact'], { endpoint: hub.url }));
      await context.close();
    });
  }

  test('a redirect to a CDN never carries the token', async (t) => {
    if (!existsSync(GOLDEN)) { t.skip('*** SKIPPED: no reference golden data ***'); return; }
    const { page, context } = await openPage(browser);
    const start = hub.log.length, cdnStart = hub.cdnLog.length;
    // No ?model= in the link: nothing is fetched before the token is typed, so the one result
    // (and every Hub request) the test sees comes from the run the token went into.
    await page.goto(url({ source: 'exact' }));
    await page.fill('#token', TOKEN);
    await page.fill('#model', 'memfit-test/cdn-llama');
    await page.click('#go');
    await page.waitForFunction(() => document.documentElement.dataset.state === 'result' && /source: |by HTTP Range/.test(document.getElementById('report').innerText));
    assert.ok(hub.log.slice(start).some((l) => l.path.endsWith('cdn-llama/resolve/main/model.safetensors') && l.auth === `Bearer ${TOKEN}`));
    const cdnGets = hub.cdnLog.slice(cdnStart).filter((l) => l.method === 'GET');
    assert.ok(cdnGets.length > 0, 'the CDN was asked');
    assert.ok(hub.cdnLog.every((l) => l.auth === null), JSON.stringify(hub.cdnLog));
    await context.close();
  });
});

describe('offline and local files', () => {
  test('the bundled catalog works with no network at all', async () => {
    const { page, context, requests } = await openPage(browser);
    await page.goto(`${site.url}/?model=bert-base-cased&offline=1&endpoint=${encodeURIComponent(CLOSED)}`);
    assert.equal(await settle(page), 'result');
    const ours = await pageJson(page);
    const cli = await cliJson([join(CONFIGS, 'bert-base-cased.json'), '--name', 'bert-base-cased']);
    assert.deepEqual(ours, cli);
    assert.ok(requests.every((u) => u.startsWith(site.url)), `only the site was asked: ${requests.filter((u) => !u.startsWith(site.url))}`);
    await shot(page, 'result-offline-catalog');
    await context.close();
  });

  test('a config.json dropped on the page', async () => {
    const { page, context, requests } = await openPage(browser);
    await page.goto(`${site.url}/`);
    const text = readFileSync(join(CONFIGS, 'microsoft--phi-2.json'), 'utf8');
    await page.evaluate((content) => {
      const dt = new DataTransfer();
      dt.items.add(new File([content], 'config.json', { type: 'application/json' }));
      const zone = document.getElementById('drop');
      zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, text);
    assert.equal(await settle(page), 'result');
    const ours = await pageJson(page);
    const cli = await cliJson([join(CONFIGS, 'microsoft--phi-2.json'), '--name', ours.name]);
    assert.deepEqual(ours, cli);
    assert.ok(requests.every((u) => u.startsWith(site.url)), 'nothing was uploaded');
    await context.close();
  });

  test('safetensors shards + index + config chosen as files: only headers are read, exact sizes', async (t) => {
    if (!existsSync(GOLDEN)) { t.skip('*** SKIPPED: no reference golden data ***'); return; }
    const { page, context } = await openPage(browser);
    await page.goto(`${site.url}/`);
    const dir = join(GOLDEN, 'tiny-gpt2/sharded');
    const files = ['config.json', 'model.safetensors.index.json', 'model-00001-of-00003.safetensors',
      'model-00002-of-00003.safetensors', 'model-00003-of-00003.safetensors'].map((f) => join(dir, f));
    await page.setInputFiles('#files', files);
    assert.equal(await settle(page), 'result', JSON.stringify(await errorOf(page)));
    const ours = await pageJson(page);
    assert.equal(ours.source, 'checkpoint');
    const cli = await cliJson([join(dir, 'model.safetensors.index.json'), '--name', ours.name]);
    assert.deepEqual(ours, cli);
    await context.close();
  });

  test('a pasted config.json', async () => {
    const { page, context } = await openPage(browser);
    // The name is typed, not linked: a link with ?model= would start fetching it (from the real
    // Hub: no endpoint) and could show that result before the paste's.
    await page.goto(`${site.url}/`);
    await page.fill('#model', 'google/gemma-2b');
    await page.click('#drop summary');
    await page.fill('#paste', readFileSync(join(CONFIGS, 'google--gemma-2b.json'), 'utf8'));
    await page.click('#paste-go');
    assert.equal(await settle(page), 'result');
    assert.deepEqual(await pageJson(page), await cliJson([join(CONFIGS, 'google--gemma-2b.json'), '--name', 'google/gemma-2b']));
    await context.close();
  });

  test('pasting something that is not a config says so', async () => {
    const { page, context } = await openPage(browser);
    await page.goto(`${site.url}/`);
    await page.click('#drop summary');
    await page.fill('#paste', '{"hello": 1}');
    await page.click('#paste-go');
    assert.equal(await settle(page), 'error');
    assert.match((await errorOf(page)).text, /neither a config\.json/);
    await context.close();
  });
});

describe('share links', () => {
  test('the share link restores the whole state', async () => {
    const { page, context } = await openPage(browser, { permissions: ['clipboard-read', 'clipboard-write'] });
    await page.goto(url({ model: 'Qwen/Qwen2-7B' }));
    await settle(page);
    await page.check('input[name=mode][value=accelerate]');
    await page.uncheck('input[name=dtype][value=int8]');
    await page.click('#planner summary');
    await page.fill('#plan-gpus', '3');
    await page.selectOption('#plan-strategy', 'sequential');
    await page.click('#run summary');
    await page.selectOption('#run-train', 'qlora');
    // the last debounced input is in the URL, and the table is the last recompute's (accelerate
    // rows float32, float16, int4: no bfloat16, no int8), not one an earlier input left
    await page.waitForFunction(() => {
      const q = new URLSearchParams(location.search);
      const table = document.querySelector('pre.table')?.textContent || '';
      return q.get('mode') === 'accelerate' && q.get('dtypes') === 'float32,float16,int4' && q.get('gpus') === '3' &&
        q.get('strategy') === 'sequential' && q.get('train') === 'qlora' &&
        /int4/.test(table) && !/int8|bfloat16/.test(table);
    });
    await page.click('#copy-link');
    await page.waitForFunction(() => document.getElementById('copy-status').dataset.copied);
    const link = await page.evaluate(() => document.getElementById('copy-status').dataset.copied);
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), link, 'on the clipboard');
    const q = new URL(link).searchParams;
    assert.equal(q.get('model'), 'Qwen/Qwen2-7B');
    assert.equal(q.get('mode'), 'accelerate');
    assert.equal(q.get('dtypes'), 'float32,float16,int4');
    assert.equal(q.get('gpus'), '3');
    assert.equal(q.get('strategy'), 'sequential');
    assert.equal(q.get('train'), 'qlora');
    assert.equal(q.get('endpoint'), hub.url);
    const table = await page.locator('pre.table').textContent();

    const again = await openPage(browser);
    await again.page.goto(link);
    assert.equal(await settle(again.page), 'result');
    assert.equal(await again.page.locator('pre.table').textContent(), table);
    assert.equal(await again.page.inputValue('#model'), 'Qwen/Qwen2-7B');
    assert.equal(await again.page.isChecked('input[name=mode][value=accelerate]'), true);
    assert.equal(await again.page.isChecked('input[name=dtype][value=int8]'), false);
    assert.equal(await again.page.inputValue('#plan-gpus'), '3');
    assert.equal(await again.page.inputValue('#plan-strategy'), 'sequential');
    assert.equal(await again.page.inputValue('#run-train'), 'qlora');
    assert.equal(await again.page.inputValue('#endpoint'), hub.url);
    await again.context.close();
    await context.close();
  });

  test('a Hub URL is accepted as the model', async () => {
    const { page, context } = await openPage(browser);
    await page.goto(url({ model: 'https://huggingface.co/EleutherAI/pythia-160m/tree/main' }));
    assert.equal(await settle(page), 'result');
    assert.equal((await pageJson(page)).name, 'EleutherAI/pythia-160m');
    await context.close();
  });
});

describe('security', () => {
  test('an XSS payload as the model id stays text', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(`${site.url}/?model=${encodeURIComponent(XSS)}&endpoint=${encodeURIComponent(hub.url)}`);
    assert.equal(await settle(page), 'error');
    // An injected <img> would be in the DOM as soon as the error was drawn (its onerror runs
    // later): none exists, so the payload cannot run.
    assert.equal(await page.evaluate(() => window.__xss), undefined);
    assert.equal(await page.locator('img').count(), 0);
    assert.ok((await errorOf(page)).text.includes(XSS), 'shown literally');
    assert.deepEqual(problems, []);
    await context.close();
  });

  for (const id of ['memfit-test/unknown-arch', 'memfit-test/xss-class']) {
    test(`an XSS payload in config fields stays text: ${id}`, async () => {
      const { page, context } = await openPage(browser);
      await page.goto(url({ model: id }));
      await settle(page);
      assert.equal(await page.evaluate(() => window.__xss), undefined);
      assert.equal(await page.locator('img').count(), 0);
      const text = await page.evaluate(() => document.body.innerText);
      assert.ok(text.includes('__xss'), 'the payload is shown as text');
      await context.close();
    });
  }

  test('a share link with another endpoint does not get a remembered token', async () => {
    const { page, context } = await openPage(browser);
    await page.goto(url({}));
    await page.evaluate(() => { document.getElementById('settings').open = true; });
    await page.fill('#token', TOKEN);
    await page.check('#remember');
    assert.equal(await page.evaluate((o) => localStorage.getItem(`memfit.token:${o}`), hub.url), TOKEN);
    const evil = await startMockHub();
    await page.goto(`${site.url}/?model=gpt2&endpoint=${encodeURIComponent(evil.url)}`);
    await settle(page);
    assert.equal(await page.inputValue('#token'), '');
    assert.ok(evil.log.every((l) => l.auth === null), 'no token to the other endpoint');
    assert.match(await page.locator('#endpoint-note').innerText(), /from the link/);
    await evil.close();
    await context.close();
  });

  test('a remembered token: boot.js asks the Hub nothing early; the page asks once per file, with it', async () => {
    const { page, context } = await openPage(browser);
    await page.goto(url({}));
    await page.evaluate(([o, t]) => localStorage.setItem(`memfit.token:${o}`, t), [hub.url, TOKEN]);
    const before = hub.log.length;
    await page.goto(url({ model: 'gpt2' }));
    assert.equal(await settle(page), 'result');
    const asked = hub.log.slice(before).filter((l) => l.method === 'GET' && /\/config\.json$|^\/api\/models\//.test(l.path));
    assert.equal(await page.evaluate(() => performance.getEntriesByName('memfit:prefetch').length), 0);
    assert.equal(asked.length, 2, JSON.stringify(asked));
    assert.ok(asked.every((l) => l.auth === `Bearer ${TOKEN}`), JSON.stringify(asked));
    await context.close();
  });
});

describe('planner panel', () => {
  // [model, page parameters, the same plan on the command line]
  const cases = [
    ['meta-llama/Meta-Llama-3-70B', { gpu: '4090', gpus: '2', cpu: '64', strategy: 'auto', pdtype: 'float16' },
      ['--max-memory', '0=24GiB,1=24GiB,cpu=64GiB', '--device-map', 'auto', '--dtype', 'float16']],
    ['mistralai/Mixtral-8x7B-v0.1', { gpu: 'a100', gpus: '2', cpu: '32', strategy: 'balanced', pdtype: 'bfloat16' },
      ['--max-memory', '0=80GiB,1=80GiB,cpu=32GiB', '--device-map', 'balanced', '--dtype', 'bfloat16']],
    ['mistralai/Mistral-7B-v0.1', { gpu: 't4', gpus: '1', cpu: '8', strategy: 'sequential', pdtype: 'float32', disk: '0' },
      ['--max-memory', '0=16GiB,cpu=8GiB', '--device-map', 'sequential', '--dtype', 'float32', '--no-disk']],
    ['meta-llama/Meta-Llama-3-8B', { gpu: '3090', gpus: '1', cpu: '64', strategy: 'fit', pdtype: 'bfloat16' },
      ['--max-memory', '0=24GiB,cpu=64GiB', '--device-map', 'fit', '--dtype', 'bfloat16']],
  ];
  for (const [id, params, args] of cases) {
    test(`the planner panel is \`memfit plan --json\`: ${id} (${params.strategy})`, async () => {
      const { page, context, problems } = await openPage(browser);
      await page.goto(url({ model: id, ...params }));
      assert.equal(await settle(page), 'result', JSON.stringify(await errorOf(page)));
      await page.click('#planner summary');
      await page.waitForFunction(() => !document.getElementById('copy-plan').disabled ||
        document.querySelector('#plan-out .notice'), null, { timeout: 20000 });
      const cli = await memfit(['plan', id, ...args, '--json'], { endpoint: hub.url });
      const shown = await page.locator('#plan-out').innerText();
      if (cli.code !== 0) {
        // the same refusal (e.g. no room without disk), in the panel
        const message = cli.stderr.trim().split('\n').pop()?.replace(/^memfit: error: /, '') || '';
        assert.match(shown, /cannot compute/, shown);
        assert.ok(message && shown.includes(message), `${shown} vs ${message}`);
        assert.equal(await page.isDisabled('#copy-plan'), true);
      } else {
        await page.click('#copy-plan');
        await page.waitForFunction(() => document.getElementById('copy-plan-status').dataset.copied);
        const ours = JSON.parse(await page.evaluate(() => document.getElementById('copy-plan-status').dataset.copied));
        assert.deepEqual(ours, JSON.parse(cli.stdout));
        // the table shows each device's bytes and budget as convert_bytes writes them
        const rows = await page.$$eval('#plan-out table.plan tbody tr', (trs) => trs.map((tr) => tr.dataset.device));
        assert.deepEqual(rows.sort(), Object.keys(ours.bytes_per_device).sort());
      }
      if (id === 'meta-llama/Meta-Llama-3-70B') await shot(page, 'planner');
      assert.deepEqual(problems, []);
      await context.close();
    });
  }
});

describe('planner panel, several hosts', () => {
  test('hosts > 1: the panel is `memfit plan --nodes … --json`, one map per host', async () => {
    const id = 'meta-llama/Meta-Llama-3-70B';
    const { page, context, problems } = await openPage(browser);
    await page.goto(url({ model: id, gpu: '4090', gpus: '2', cpu: '64', strategy: 'fit', pdtype: 'bfloat16',
      hosts: '3', link: '100Gbps' }));
    assert.equal(await settle(page), 'result', JSON.stringify(await errorOf(page)));
    await page.click('#planner summary');
    await page.waitForFunction(() => !document.getElementById('copy-plan').disabled ||
      document.querySelector('#plan-out .notice'), null, { timeout: 20000 });
    const nodes = ['host1', 'host2', 'host3'].map((h) => `${h}=0:24GiB,1:24GiB,cpu:64GiB,gpu:NVIDIA RTX 4090`).join(';');
    const cli = await memfit(['plan', id, '--nodes', nodes, '--link', '100Gbps', '--device-map', 'fit',
      '--dtype', 'bfloat16', '--json'], { endpoint: hub.url });
    assert.equal(cli.code, 0, cli.stderr);
    await page.click('#copy-plan');
    await page.waitForFunction(() => document.getElementById('copy-plan-status').dataset.copied);
    const ours = JSON.parse(await page.evaluate(() => document.getElementById('copy-plan-status').dataset.copied));
    assert.deepEqual(ours, JSON.parse(cli.stdout));
    const hosts = await page.$$eval('#plan-out h3.host', (hs) => hs.map((h) => h.dataset.host));
    assert.deepEqual(hosts, ['host1', 'host2', 'host3']);
    assert.equal(await page.locator('#plan-out table.plan').count(), 3);
    assert.deepEqual(problems, []);
    await context.close();
  });
});

describe('panels, layout and speed', () => {
  test('a link with a model starts the one worker, compiles its module and asks the Hub before app.js runs; a plain visit starts none', async () => {
    const { page, context, problems, requests } = await openPage(browser);
    await page.goto(url({ model: 'gpt2' }));
    assert.equal(await settle(page), 'result');
    const order = await page.evaluate(() => ({
      fetched: performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/js/worker.js')).length,
      wasm: performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/wasm/memfit.wasm')).length,
      worker: performance.getEntriesByName('memfit:worker').map((e) => e.startTime),
      app: performance.getEntriesByName('memfit:app').map((e) => e.startTime),
      left: 'memfitBootWorker' in globalThis,
      // boot.js's early Hub requests: each URL asked once, and both answers taken by hub.js
      prefetch: performance.getEntriesByName('memfit:prefetch').length,
      untaken: /** @type {any} */ (globalThis).memfitPrefetch?.size,
      hub: performance.getEntriesByType('resource').map((e) => e.name)
        .filter((n) => /\/config\.json$|\/api\/models\//.test(n)),
    }));
    assert.equal(order.prefetch, 1, 'boot.js asked the Hub');
    assert.equal(order.untaken, 0, 'hub.js took both early answers');
    assert.equal(order.hub.length, 2, `the Hub was asked once for each: ${order.hub.join(', ')}`);
    assert.equal(new Set(order.hub).size, 2);
    assert.equal(order.fetched, 1, 'worker.js fetched once');
    // boot.js fetched and compiled the first module and the worker took it: no second request
    // from the worker (which it makes when the page could not, e.g. under a CSP without
    // 'wasm-unsafe-eval')
    assert.equal(order.wasm, 1, 'the page fetched memfit.wasm');
    assert.equal(requests.filter((r) => r.endsWith('/wasm/memfit.wasm')).length, 1, 'memfit.wasm was asked for once');
    assert.equal(order.worker.length, 1, 'boot.js started a worker');
    assert.ok(order.worker[0] < order.app[0], `worker started at ${order.worker[0]} ms, app.js ran at ${order.app[0]} ms`);
    assert.equal(order.left, false, 'api.js adopted the worker boot.js started');
    assert.equal(page.workers().length, 1);
    assert.deepEqual(problems, []);
    const plain = await openPage(browser);
    await plain.page.goto(`${site.url}/`);
    await plain.page.waitForFunction(() => performance.getEntriesByName('memfit:app').length === 1);
    assert.equal(plain.page.workers().length, 0, 'no worker (and no module) for a visit that computes nothing');
    await plain.context.close();
    await context.close();
  });

  test('a model type no family knows: estimated from its safetensors headers, approximate parts said', async (t) => {
    if (!existsSync(GOLDEN)) return t.skip('no reference data (MEMFIT_REFERENCE_DIR)');
    const { page, context, problems } = await openPage(browser);
    await page.goto(url({ model: 'memfit-test/unknown-with-weights' }));
    assert.equal(await settle(page), 'result', JSON.stringify(await errorOf(page)));
    const report = await page.evaluate(() => document.getElementById('report').innerText);
    assert.match(report, /safetensors headers/);
    assert.match(report, /Approximate: .*kv cache/i);
    const json = await pageJson(page);
    const cli = await cliJson(['memfit-test/unknown-with-weights'], { endpoint: hub.url });
    assert.equal(json.parameters, cli.parameters, 'the CLI falls back to the same headers');
    // the one 404: the probe for model.safetensors.index.json before the single file
    assert.deepEqual(problems.filter((p) => !/404/.test(p)), []);
    await context.close();
  });

  test('a first visit loads the first module only; a family outside it brings memfit-all.wasm, once', async () => {
    const { page, context, problems, requests } = await openPage(browser);
    const loads = (/** @type {string} */ f) => requests.filter((u) => u.endsWith(`/wasm/${f}`)).length;
    await page.goto(url({ model: 'gpt2' }));
    assert.equal(await settle(page), 'result');
    assert.equal(loads('memfit.wasm'), 1);
    assert.equal(loads('memfit-all.wasm'), 0, 'gpt2 is in the first module');
    // whisper is not (wasm/first_chunk.def): the worker fetches the second module and answers
    // with it — the numbers themselves are the CLI's ("numbers" above).
    await page.fill('#model', 'openai/whisper-tiny');
    await page.press('#model', 'Enter');
    await page.waitForFunction(() => /whisper-tiny/.test(document.getElementById('report')?.innerText || ''));
    assert.equal(await settle(page), 'result', JSON.stringify(await errorOf(page)));
    await page.fill('#model', 'google/flan-t5-base');
    await page.press('#model', 'Enter');
    await page.waitForFunction(() => /flan-t5-base/.test(document.getElementById('report')?.innerText || ''));
    assert.equal(await settle(page), 'result', JSON.stringify(await errorOf(page)));
    assert.equal(loads('memfit-all.wasm'), 1, 'the second module is fetched once');
    assert.equal(loads('memfit.wasm'), 1);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("a link's first visit asks the Hub before catalog.json, and times the worker's start-up", async () => {
    const { page, context, problems, requests } = await openPage(browser);
    await page.goto(url({ model: 'gpt2' }));
    assert.equal(await settle(page), 'result');
    // the catalog's list is drawn after the first result: its fetch no longer slows the Hub's
    await page.waitForSelector('#catalog-list li');
    const at = (/** @type {string} */ part) => requests.findIndex((u) => new URL(u).pathname.endsWith(part));
    assert.ok(at('/catalog.json') > at('/gpt2/resolve/main/config.json'), requests.join('\n'));
    // the model's listing (?blobs=true: file sizes for other kinds of repos) comes first too
    assert.ok(at('/api/models/gpt2') >= 0 && at('/catalog.json') > at('/api/models/gpt2'), requests.join('\n'));
    assert.equal(requests.filter((u) => u.endsWith('/wasm/memfit.wasm')).length, 1, 'the .wasm is fetched once (by the worker, not again by the glue)');
    // the first module's glue comes inside js/worker.js (web/tools/bundle.mjs): no request of its own
    assert.ok(requests.some((u) => u.endsWith('/js/worker.js')), requests.join('\n'));
    assert.equal(requests.filter((u) => u.endsWith('/wasm/memfit.mjs')).length, 0, requests.join('\n'));
    const t = JSON.parse(await page.evaluate(() => document.documentElement.dataset.timeline || '{}'));
    for (const k of ['worker_start', 'wasm_ready', 'first_call', 'model_fetched', 'result']) assert.equal(typeof t[k], 'number', `${k} in ${JSON.stringify(t)}`);
    assert.ok(t.worker_start <= t.wasm_ready && t.wasm_ready <= t.result, JSON.stringify(t));
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('an idle page lets the worker go (?idle=MS), and the next input starts another', { timeout: 60000 }, async () => {
    const { page, context, problems } = await openPage(browser);
    let started = 0;
    page.on('worker', () => { started += 1; });
    await page.goto(url({ model: 'gpt2', idle: '50' }));
    assert.equal(await settle(page), 'result');
    // idle: each worker ends, and the module's memory with it (the test times out if none does)
    await Promise.all(page.workers().map((w) => new Promise((done) => w.once('close', done))));
    assert.equal(page.workers().length, 0);
    const before = started;
    await page.uncheck('input[name=dtype][value=int8]');
    await page.waitForFunction(() => {
      const table = document.querySelector('pre.table')?.textContent || '';
      return /float32/.test(table) && !/int8/.test(table);
    });
    assert.equal(started, before + 1, 'a new worker answered');
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("the inputs offer core's choices (supported()), drawn without loading the module", async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(`${site.url}/?gpu=a100-40gb&rgpu=a10g`);
    const s = (await wasm()).supported();
    const options = (/** @type {string} */ id) => page.$$eval(`#${id} option`, (os) => os.map((o) => o.value));
    assert.deepEqual(await options('plan-strategy'), s.strategies);
    assert.deepEqual(await options('plan-dtype'), s.dtypes.memfit);
    assert.deepEqual(await options('run-dtype'), ['', ...s.weight_dtypes]);
    assert.deepEqual(await options('run-kv'), ['', ...s.kv_dtypes]);
    assert.deepEqual(await options('run-engine'), s.engines);
    assert.deepEqual(await options('run-train'), ['none', ...s.train_methods]);
    assert.deepEqual(await options('run-optimizer'), s.optimizers);
    for (const id of ['plan-gpu', 'run-gpu']) {
      assert.deepEqual((await options(id)).sort(), s.gpus.map((g) => g.aliases[0]).sort(), id);
    }
    assert.deepEqual(await page.$$eval('input[name=dtype]', (bs) => bs.map((b) => b.value)), s.dtypes.memfit);
    // a link's GPU by any name core accepts for it
    assert.equal(await page.inputValue('#plan-gpu'), 'a10040gb');
    assert.equal(await page.inputValue('#run-gpu'), 'a10');
    assert.equal(page.workers().length, 0, 'no worker');
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('the planner and "will it run?" panels answer (or say politely they cannot yet)', async () => {
    const { page, context, problems } = await openPage(browser);
    await page.goto(url({ model: 'mistralai/Mistral-7B-v0.1' }));
    await settle(page);
    await page.click('#planner summary');
    await page.click('#run summary');
    await page.waitForFunction(() => !/Estimate a model first/.test(document.getElementById('plan-out').innerText) &&
      !/Estimate a model first/.test(document.getElementById('run-out').innerText));
    for (const id of ['#plan-out', '#run-out']) {
      const text = await page.locator(id).innerText();
      assert.ok(/not available yet|cannot compute|GPU|Fits|Needs|Does not fit|Inference/.test(text), `${id}: ${text}`);
    }
    await shot(page, 'panels');
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('dark mode and a phone-width screen', async () => {
    const dark = await openPage(browser, { colorScheme: 'dark' });
    await dark.page.goto(url({ model: 'meta-llama/Meta-Llama-3-8B' }));
    await settle(dark.page);
    const bg = await dark.page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(bg, 'rgb(13, 17, 23)');
    await shot(dark.page, 'result-dark');
    await dark.context.close();

    const phone = await openPage(browser, { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true });
    await phone.page.goto(url({ model: 'meta-llama/Meta-Llama-3-8B' }));
    await settle(phone.page);
    const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no horizontal scrolling of the page (${overflow}px)`);
    await shot(phone.page, 'result-phone');
    await phone.context.close();
  });

  test('contrast: every visible text is at least 4.5:1 (3:1 when large), light and dark', async () => {
    for (const colorScheme of ['light', 'dark']) {
      const { page, context } = await openPage(browser, { colorScheme });
      await page.goto(url({ model: 'mistralai/Mistral-7B-v0.1' }));
      assert.equal(await settle(page), 'result');
      await page.click('#planner summary');
      await page.click('#run summary');
      await page.click('#settings summary');
      await page.waitForFunction(() => document.querySelector('#plan-out table, #plan-out .notice'));
      const low = await page.evaluate(() => {
        /** @param {string} c */
        const rgba = (c) => (c.match(/[\d.]+/g) || []).map(Number);
        /** @param {number[]} c */
        const lum = ([r, g, b]) => {
          const f = (/** @type {number} */ v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
          return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
        };
        /** the colour behind an element: its own or its nearest ancestor's opaque background */
        const behind = (/** @type {Element | null} */ e) => {
          for (; e; e = e.parentElement) {
            const c = rgba(getComputedStyle(e).backgroundColor);
            if (c.length >= 3 && (c.length === 3 || c[3] > 0.5)) return c;
          }
          return [255, 255, 255];
        };
        const out = [];
        for (const e of document.querySelectorAll('body *')) {
          const text = [...e.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent.trim()).join('');
          if (!text || e.closest('[hidden], [aria-hidden=true], details:not([open]) > :not(summary), svg, .visually-hidden, .skip')) continue;
          const s = getComputedStyle(e);
          const r = e.getBoundingClientRect();
          if (s.visibility === 'hidden' || s.display === 'none' || r.width === 0 || e.closest(':disabled')) continue;
          const fg = rgba(s.color), bg = behind(e);
          const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
          const ratio = (hi + 0.05) / (lo + 0.05);
          const size = parseFloat(s.fontSize), bold = Number(s.fontWeight) >= 700;
          const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
          if (ratio < need) out.push(`${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}.${e.className} “${text.slice(0, 30)}” ${ratio.toFixed(2)}:1`);
        }
        return out;
      });
      assert.deepEqual(low, [], `${colorScheme}: ${low.join('; ')}`);
      await context.close();
    }
  });

  test('keyboard: the form works without a mouse, and every control has a label', async () => {
    const { page, context } = await openPage(browser);
    await page.goto(`${site.url}/?endpoint=${encodeURIComponent(hub.url)}`);
    const unlabeled = await page.evaluate(() => [...document.querySelectorAll('input, select, textarea')]
      .filter((e) => e.type !== 'hidden' && !e.labels?.length && !e.getAttribute('aria-label')).map((e) => e.id || e.name));
    assert.deepEqual(unlabeled, []);
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'model');
    await page.keyboard.type('gpt2');
    await page.keyboard.press('Enter');
    assert.equal(await settle(page), 'result');
    await context.close();
  });

  test('speed: first result for a cached model, and per-estimate time in WASM', async () => {
    const { page, context } = await openPage(browser);
    const times = {};
    for (const id of ['meta-llama/Meta-Llama-3-70B', 'mistralai/Mixtral-8x7B-v0.1']) {
      await page.goto(url({ model: id }));
      await settle(page);
      await page.reload();   // now the site, the module and the config are in the HTTP cache
      await settle(page);
      const first = Number(await page.evaluate(() => document.documentElement.dataset.firstResultMs));
      const runs = [];
      for (let i = 0; i < 5; i++) {
        await page.evaluate(() => { document.documentElement.dataset.state = ''; });
        await page.click(i % 2 ? 'input[name=mode][value=memfit]' : 'input[name=mode][value=accelerate]');
        await page.waitForFunction(() => document.documentElement.dataset.state === 'result');
        runs.push(Number(await page.evaluate(() => document.documentElement.dataset.estimateMs)));
      }
      runs.sort((a, b) => a - b);
      times[id] = { first_result_ms: first, estimate_ms_median: runs[2] };
    }
    console.log(`memfit web speed: ${JSON.stringify(times)}`);
    await context.close();
  });
});
