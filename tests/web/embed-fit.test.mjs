// The widget's one-line answer — "does it fit on my GPU at my context?" — for a transformers
// model (core's inference api, as the page's run panel asks it) and the main table of repos of
// other kinds (GGUF, diffusers, sentence-transformers, PEFT), on a page of another origin. The
// numbers are the native CLI's on the same mock Hub, and the KV cache is checked by hand from the
// model's config.json.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMockHub } from './support/mock-hub.mjs';
import { startHostPage } from './support/host-page.mjs';
import { serveStatic } from '../../web/tools/serve.mjs';
import { launch, openPage, shot } from './support/browser.mjs';
import { cliJson, memfit } from './support/cli.mjs';
import { CONFIGS, WEB_DIR, need } from './support/paths.mjs';
import { convertBytes, withCommas } from '../../web/js/format.js';

let hub, site, host, hostUrl, browser;

before(async () => {
  need(join(WEB_DIR, 'embed.js'), 'the built site (web/tools/build.mjs)');
  hub = await startMockHub();
  site = await serveStatic(WEB_DIR);
  host = await startHostPage();
  hostUrl = host.url;
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await site?.close();
  await hub?.close();
  await host?.close();
});

/**
 * A host page with these <memfit-estimate> elements (attributes each); resolves once every one
 * shows a result or an error, with the page.
 * @param {Record<string, string>[]} widgets
 */
async function hostPage(widgets) {
  const tags = widgets.map((w, i) => `<memfit-estimate id="w${i}" endpoint="${hub.url}" ${Object.entries(w)
    .map(([k, v]) => `${k}="${v}"`).join(' ')}></memfit-estimate>`).join('\n');
  host.setHtml(`<!doctype html><html><head><script type="module" src="${site.url}/embed.js"></script></head><body>${tags}</body></html>`);
  const opened = await openPage(browser);
  await opened.page.goto(`${hostUrl}/`);
  await opened.page.waitForFunction((n) => Array.from({ length: n }, (_, i) => document.getElementById(`w${i}`))
    .every((e) => ['result', 'error'].includes(e.dataset.state)), widgets.length, { timeout: 60000 });
  return opened;
}

/** @param {import('playwright-core').Page} page @param {number} i */
const widget = (page, i) => page.evaluate((id) => {
  const root = document.getElementById(id).shadowRoot;
  return {
    state: document.getElementById(id).dataset.state,
    fit: root.querySelector('.fit')?.textContent ?? null,
    rows: [...root.querySelectorAll('tbody tr')].map((tr) => [...tr.children].map((c) => c.textContent)),
    text: root.textContent,
  };
}, `w${i}`);

const LLAMA = 'meta-llama/Llama-2-7b-hf';

test('a transformers model: fits or not, at the context, with the parts of the total (the CLI\'s numbers)', async () => {
  const { page, context, problems } = await hostPage([
    { model: LLAMA, gpu: 'RTX 4090', context: '4096' },
    { model: LLAMA, gpu: 'RTX 4080', context: '16384' },
  ]);
  // the KV cache by hand: K and V, per layer, per KV head, head_dim values per token, 2 bytes (float16)
  const config = JSON.parse(readFileSync(join(CONFIGS, 'meta-llama--Llama-2-7b-hf.json'), 'utf8'));
  const headDim = config.hidden_size / config.num_attention_heads;
  const kv = (/** @type {number} */ tokens) => 2 * config.num_hidden_layers * config.num_key_value_heads * headDim * tokens * 2;

  for (const [i, gpu, tokens] of [[0, 'RTX 4090', 4096], [1, 'RTX 4080', 16384]]) {
    const w = await widget(page, i);
    assert.equal(w.state, 'result', w.text);
    const cli = await cliJson([LLAMA, '--gpu', gpu, '--context', String(tokens)], { endpoint: hub.url });
    const { fit, inference } = cli;
    assert.equal(inference.kv_cache_bytes, kv(tokens), 'the CLI\'s KV cache is the config\'s arithmetic');
    const head = `${fit.fits ? 'Fits' : 'Does not fit'} ${fit.gpu.name} (${convertBytes(fit.gpu.memory_bytes)}) at ${withCommas(tokens)} tokens: ` +
      `${convertBytes(inference.total_bytes)} of ${convertBytes(fit.usable_bytes)} (weights ${convertBytes(inference.weights_bytes)} + KV cache ${convertBytes(kv(tokens))}`;
    assert.ok(w.fit?.startsWith(head), `widget ${i}: “${w.fit}” starts with “${head}”`);
    if (!fit.fits && fit.max_context > 0) assert.ok(w.fit.includes(`fits up to ${withCommas(fit.max_context)} tokens`), w.fit);
    // the estimate table is still there, the CLI's rows
    const est = await cliJson([LLAMA], { endpoint: hub.url });
    assert.deepEqual(w.rows, est.rows.map((r) => [r.dtype, r.largest_layer, r.total, r.training]));
  }
  assert.match((await widget(page, 0)).fit, /^Fits /);
  assert.match((await widget(page, 1)).fit, /^Does not fit /);
  await shot(page, 'embed-fit');
  assert.deepEqual(problems, []);
  await context.close();
});

test('the defaults: the RTX 4090, at the model\'s default context (as the page)', async () => {
  const { page, context } = await hostPage([{ model: LLAMA }]);
  const cli = await cliJson([LLAMA, '--gpu', '4090'], { endpoint: hub.url });
  const w = await widget(page, 0);
  assert.ok(w.fit?.includes(`${cli.fit.gpu.name} (${convertBytes(cli.fit.gpu.memory_bytes)}) at ${withCommas(cli.inference.context)} tokens`), w.fit);
  assert.equal(cli.inference.context, Math.min(4096, JSON.parse(readFileSync(join(CONFIGS, 'meta-llama--Llama-2-7b-hf.json'), 'utf8')).max_position_embeddings));
  await context.close();
});

test('a GPU that is not in the catalogue: core\'s message in place of the fit, the table still shown', async () => {
  const { page, context } = await hostPage([{ model: LLAMA, gpu: 'Voodoo 5' }]);
  const cli = await memfit(['estimate', LLAMA, '--gpu', 'Voodoo 5'], { endpoint: hub.url });
  assert.notEqual(cli.code, 0);
  const w = await widget(page, 0);
  assert.equal(w.state, 'result');
  assert.match(w.fit, /not in memfit's catalogue/);
  assert.ok(w.rows.length > 0);
  await context.close();
});

/**
 * `memfit estimate ID --json --vram BYTES [--context N]`: the report, or the error line.
 * @param {string} id @param {number} vram @param {number} [tokens]
 */
async function cliRepo(id, vram, tokens) {
  const args = ['estimate', id, '--json', '--vram', String(vram)];
  if (tokens) args.push('--context', String(tokens));
  const r = await memfit(args, { endpoint: hub.url });
  if (r.code === 0) return { report: JSON.parse(r.stdout) };
  return { error: (/memfit: error: (.*)/.exec(r.stderr) || [r.stderr, r.stderr])[1].trim() };
}

test('repos of other kinds: the report\'s main table (the CLI\'s), or its error', async () => {
  const repos = [
    ['memfit-test/llama-13b-gguf', 'gguf'], ['memfit-test/tiny-diffusers', 'diffusers'],
    ['memfit-test/minilm-sentence-transformers', 'sentence-transformers'], ['memfit-test/tiny-llama-lora', 'peft'],
  ];
  const { page, context, problems } = await hostPage(repos.map(([model]) => ({ model, gpu: 'RTX 4080', context: '8192' })));
  for (const [i, [id, kind]] of repos.entries()) {
    const w = await widget(page, i);
    const cli = await cliRepo(id, 16 * 2 ** 30, 8192);
    if (cli.report) {
      assert.equal(w.state, 'result', `${id}: ${w.text}`);
      assert.equal(cli.report.kind, kind);
      assert.deepEqual(w.rows, cli.report.tables[0].rows, id);
      const f = cli.report.fields;
      const gpu = 'NVIDIA RTX 4080 (16.0 GB)';  // the catalogue's name, 16 GiB
      if (kind === 'gguf') {
        // the largest quantization whose VRAM (every layer on the GPU) fits, by the CLI's numbers
        const fits = f.models.filter((m) => typeof m.vram_needed === 'number' && m.vram_needed <= 16 * 2 ** 30);
        assert.ok(fits.length > 0 && fits.length < f.models.length, 'the fixture has quantizations on both sides of 16 GiB');
        const best = fits.reduce((a, b) => (b.vram_needed > a.vram_needed ? b : a));
        assert.equal(w.fit, `Largest that fits ${gpu} at 8,192 tokens: ${best.quant} (${convertBytes(best.vram_needed)} with every layer on the GPU)`);
      }
      if (kind === 'diffusers') assert.match(w.fit, new RegExp(`^Fits ${gpu.replace(/[()]/g, '\\$&')} with no offload`), 'a small pipeline fits whole');
    } else {
      assert.equal(w.state, 'error', `${id}: the CLI says “${cli.error}”; the widget: ${w.text}`);
      assert.ok(w.text.includes(cli.error), `${id}: “${cli.error}” in ${w.text}`);
    }
  }
  await shot(page, 'embed-repos');
  assert.deepEqual(problems.filter((p) => !/40[34]/.test(p)), []);
  await context.close();
});
