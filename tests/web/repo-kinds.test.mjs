// Repos that are not one transformers/timm model, on the page, against the mock Hub
// (support/repo-fixtures.mjs): a GGUF repo, a diffusers pipeline, a sentence-transformers model
// and a PEFT adapter with its base. The page asks core's repo() in rounds and draws the report;
// what it shows must be what `memfit estimate ORG/NAME --json` prints for the same repo and the
// same GPU and context (the native CLI reads the same mock Hub), and a kind that cannot be
// answered must show the CLI's error. Changing the GPU or the context asks the module again
// without fetching anything.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { errorOf, openPage, pageJson, settle, shot } from './support/browser.mjs';
import { memfit } from './support/cli.mjs';
import { startPageEnv } from './support/page-env.mjs';
import { GGUF_FIRST_READ, GGUF_QUANTS, PEFT_BASE } from './support/repo-fixtures.mjs';

let env;
before(async () => { env = await startPageEnv(); });
after(async () => { await env?.close(); });

const GIB = 2 ** 30;
/** The page's requests to the Hub (the CLI's, to the same mock Hub, carry no Origin). */
const pageRequests = () => env.hub.log.filter((l) => l.origin);

/**
 * `memfit estimate ID --json` with the page's GPU memory (--vram) and context: the report, or
 * the error it printed.
 * @param {string} id @param {{vram: number, context?: number}} o
 */
async function cli(id, o) {
  const args = ['estimate', id, '--json', '--vram', String(o.vram)];
  if (o.context) args.push('--context', String(o.context));
  const r = await memfit(args, { endpoint: env.hub.url });
  if (r.code === 0) return { report: JSON.parse(r.stdout) };
  const m = /memfit: error: (.*)/.exec(r.stderr) || /"message"\s*:\s*"([^"]*)"/.exec(r.stderr);
  assert.ok(m, `memfit ${args.join(' ')}: exit ${r.code} without an error message: ${r.stderr}`);
  return { error: m[1].trim(), code: r.code };
}

/**
 * Opens the page on a repo and checks it shows what the CLI says: the same report (as "Copy as
 * JSON" gives it), or the same error message.
 * @param {string} id @param {string} kind
 */
async function sameAsCli(id, kind) {
  const { page, problems, context } = await openPage(env.browser);
  await page.goto(env.url({ model: id }));
  const shown = await settle(page, 60000);
  const expected = await cli(id, { vram: 24 * GIB });  // the page's default GPU: the RTX 4090
  if (expected.report) {
    assert.equal(shown, 'result', JSON.stringify(await errorOf(page)));
    assert.equal(expected.report.kind, kind);
    assert.deepEqual(await pageJson(page), expected.report);
    // the page draws each table of the report, cell for cell
    const tables = await page.$$eval('#report table.repo-table', (ts) => ts.map((t) =>
      [...t.querySelectorAll('tbody tr')].map((tr) => [...tr.children].map((c) => c.textContent))));
    assert.deepEqual(tables, expected.report.tables.map((t) => t.rows));
    assert.equal(await page.locator('#report .facts').textContent(), expected.report.title || expected.report.kind);
  } else {
    assert.equal(shown, 'error', 'the CLI failed on this repo, the page must say why');
    const e = await errorOf(page);
    assert.ok(e.text.includes(expected.error), `the page says the CLI's error “${expected.error}”: ${e.text}`);
  }
  assert.deepEqual(problems.filter((p) => !/40[34]/.test(p)), []);
  return { page, context, expected };
}

describe('repo kinds on the page', () => {
  test('a GGUF repo: its quantizations table; GPU and context re-ask the module, nothing is fetched again', async () => {
    const id = 'memfit-test/llama-13b-gguf';
    const { page, context, expected } = await sameAsCli(id, 'gguf');
    await shot(page, 'repo-gguf');
    if (expected.report) {
      // the quantizations are the main view: every .gguf file of the repo is a row of the first table
      const first = expected.report.tables[0].rows.map((r) => r.join(' '));
      for (const file of Object.keys(GGUF_QUANTS)) {
        const quant = file.split('.').slice(-2, -1)[0];
        assert.ok(first.some((r) => r.includes(quant)), `${quant} in ${first}`);
      }
      const fetched = pageRequests().length;
      await page.click('#run summary');
      await page.selectOption('#run-gpu', '4080');
      // the slider is log2 of the context: 13 is 8,192 tokens
      await page.locator('#run-context').evaluate((e) => {
        e.value = '13';
        e.dispatchEvent(new Event('input', { bubbles: true }));
        e.dispatchEvent(new Event('change', { bubbles: true }));
      });
      await page.waitForFunction(() => /4080/.test(document.querySelector('#report .check')?.textContent || '') &&
        /8,192/.test(document.querySelector('#report .check')?.textContent || '') && !!document.querySelector('#report table.repo-table'));
      const again = await cli(id, { vram: 16 * GIB, context: 8192 });
      assert.deepEqual(await pageJson(page), again.report);
      assert.equal(pageRequests().length, fetched, 'nothing fetched again for another GPU or context');
    }
    await context.close();
  });

  test('a GGUF header longer than the first read: read again, larger, by Range only', async () => {
    // the fixtures' vocabulary makes each header ~1.4 MB: more than the first 1 MiB core asks
    const before = pageRequests().length;
    const { context, expected } = await sameAsCli('memfit-test/llama-13b-gguf', 'gguf');
    const reads = pageRequests().slice(before).filter((l) => l.path.endsWith('.gguf'));
    if (expected.report) {
      assert.ok(reads.length > 0, 'the GGUF files are read');
      assert.ok(reads.every((l) => /^bytes=\d+-\d+$/.test(l.range || '')), `by Range only: ${JSON.stringify(reads)}`);
      const ranges = reads.map((l) => /^bytes=(\d+)-(\d+)$/.exec(l.range).slice(1).map(Number));
      assert.deepEqual(ranges[0], [0, GGUF_FIRST_READ - 1], 'the first read is what core asks');
      assert.ok(ranges.length > 1, 'a larger read follows the first');
      // each later read starts where the one before ended (only the bytes not yet held)
      for (let i = 1; i < ranges.length; i++) assert.equal(ranges[i][0], ranges[i - 1][1] + 1, JSON.stringify(ranges));
    }
    await context.close();
  });

  test('a diffusers pipeline: one table of its components', async () => {
    const { page, context } = await sameAsCli('memfit-test/tiny-diffusers', 'diffusers');
    await shot(page, 'repo-diffusers');
    await context.close();
  });

  test('a sentence-transformers model', async () => {
    const { context } = await sameAsCli('memfit-test/minilm-sentence-transformers', 'sentence-transformers');
    await context.close();
  });

  test('a PEFT adapter: its base is read from its own repo', async () => {
    const before = pageRequests().length;
    const { context, expected } = await sameAsCli('memfit-test/tiny-llama-lora', 'peft');
    if (expected.report) {
      const paths = pageRequests().slice(before).map((l) => l.path);
      assert.ok(paths.some((p) => p.startsWith(`/${PEFT_BASE}/resolve/`)), `the base's files are read: ${paths}`);
    }
    await context.close();
  });

  test('a transformers model is estimated as before, without the second module', async () => {
    const { page, context, requests } = await openPage(env.browser);
    await page.goto(env.url({ model: 'gpt2' }));
    assert.equal(await settle(page), 'result');
    assert.ok(!requests.some((u) => u.includes('memfit-all')), 'memfit-all.wasm is not loaded for a transformers model');
    await context.close();
  });
});
