#!/usr/bin/env node
// The page's speed in Debian's chromium, on 127.0.0.1 (scripts/bench-web.sh runs it; prints,
// asserts nothing — the README records the numbers):
//  - the bundle's size (memfit.wasm + memfit.mjs): gzip -9, and as served (the precompressed
//    .gz files web/tools/build.mjs writes, zopfli-made where zopfli is installed);
//  - first visit (a fresh browser context: nothing cached, the module compiled and called for the
//    first time) and first result for a cached model (after one visit put the site, the module
//    and the Hub's answers in the HTTP cache): page load → result on screen, with where the time
//    went and what the first estimate cost;
//  - per-estimate time in WASM (the api call inside the worker), and the round trip the page
//    sees (postMessage + JSON.parse of the reply), for the models the issue names.
// Environment: as the tests (tests/web/support/paths.mjs); RUNS (page reloads ×2, default 9);
// ESTIMATES (per model and mode, default 31, after 10 untimed ones: the first calls run in V8's
// baseline tier until its optimizing tier takes over, so the median of a handful swings 2×; of 31
// it is the steady state a visitor editing the inputs sees).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { startMockHub } from './support/mock-hub.mjs';
import { serveStatic } from '../../web/tools/serve.mjs';
import { launch, openPage, settle } from './support/browser.mjs';
import { CONFIGS, ROOT, WEB_DIR, need } from './support/paths.mjs';

const RUNS = Number(process.env.RUNS || 9);
const ESTIMATES = Number(process.env.ESTIMATES || 31);
const MODELS = ['meta-llama/Meta-Llama-3-70B', 'mistralai/Mixtral-8x7B-v0.1', 'deepseek-ai/DeepSeek-V3', 'gpt2',
  'Qwen/Qwen3-Coder-480B-A35B-Instruct', 'moonshotai/Kimi-K2-Instruct'];
/** A model's config.json: the test fixtures, else the examples. @param {string} id */
function configOf(id) {
  const file = `${id.replace('/', '--')}.json`;
  try { return readFileSync(join(CONFIGS, file), 'utf8'); } catch { return readFileSync(join(ROOT, 'examples/configs', file), 'utf8'); }
}

const median = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const round = (/** @type {number} */ x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

need(join(WEB_DIR, 'wasm/memfit.wasm'), 'the built site (web/tools/build.mjs)');
const sizes = {};
for (const f of ['memfit.wasm', 'memfit.mjs']) {
  const bytes = readFileSync(join(WEB_DIR, 'wasm', f));
  // gzip -9, as wasm/cmake/size.cmake measures the budget
  sizes[f] = {
    bytes: bytes.length,
    gzip: execFileSync('gzip', ['-9c', join(WEB_DIR, 'wasm', f)], { maxBuffer: 1 << 26 }).length,
    served: readFileSync(join(WEB_DIR, 'wasm', `${f}.gz`)).length,
  };
}
const total = sizes['memfit.wasm'].gzip + sizes['memfit.mjs'].gzip;
const served = sizes['memfit.wasm'].served + sizes['memfit.mjs'].served;
console.log(`bundle: memfit.wasm ${sizes['memfit.wasm'].bytes} B (${sizes['memfit.wasm'].gzip} gzipped), ` +
  `memfit.mjs ${sizes['memfit.mjs'].bytes} B (${sizes['memfit.mjs'].gzip} gzipped): ${total} B gzip -9 ` +
  `(budget 204800: ${total <= 204800 ? 'within' : 'OVER'}); as served (.gz): ${served} B ` +
  `(${served <= 204800 ? 'within' : 'OVER'})`);

const hub = await startMockHub();
const site = await serveStatic(WEB_DIR);
const browser = await launch();
const results = { bundle_gzip_bytes: total, bundle_served_bytes: served, first_visit: {}, first_result: {}, estimate: {} };
const timeline = (/** @type {any} */ page) => page.evaluate(() => document.documentElement.dataset.timeline || '{}').then(JSON.parse);
try {
  // First visit: a fresh browser context each time (empty HTTP cache, new worker, the module
  // fetched, compiled and called for the first time).
  for (const id of MODELS.slice(0, 2)) {
    const runs = [];
    for (let i = 0; i < Math.max(3, RUNS >> 1); i++) {
      const { page, context } = await openPage(browser);
      await page.goto(`${site.url}/?${new URLSearchParams({ model: id, endpoint: hub.url })}`);
      await settle(page, 120000);
      runs.push(await timeline(page));
      await context.close();
    }
    const pick = (/** @type {string} */ k) => median(runs.map((r) => r[k] ?? NaN));
    results.first_visit[id] = {
      result_ms: pick('result'), app_start_ms: pick('app_start'), model_fetched_ms: pick('model_fetched'),
      wasm_ready_ms: pick('wasm_ready'), estimate_ms: round(pick('estimate_ms'), 2),
    };
  }

  const { page, context } = await openPage(browser);
  const url = (/** @type {string} */ id) => `${site.url}/?${new URLSearchParams({ model: id, endpoint: hub.url })}`;

  for (const id of MODELS.slice(0, 2)) {
    await page.goto(url(id));
    await settle(page, 120000);
    const runs = [];
    for (let i = 0; i < Math.max(3, RUNS >> 1); i++) {
      await page.reload();
      await settle(page, 120000);
      runs.push(JSON.parse(await page.evaluate(() => document.documentElement.dataset.timeline || '{}')));
    }
    const pick = (/** @type {string} */ k) => median(runs.map((r) => r[k] ?? NaN));
    results.first_result[id] = {
      result_ms: pick('result'), app_start_ms: pick('app_start'), model_fetched_ms: pick('model_fetched'),
      wasm_ready_ms: pick('wasm_ready'), estimate_ms: round(pick('estimate_ms'), 2),
    };
  }

  for (const id of MODELS) {
    const config = configOf(id);
    const n = ESTIMATES;
    for (const mode of ['memfit', 'accelerate']) {
      const r = await page.evaluate(async ({ config, id, mode, n }) => {
        const { engine } = await import('/js/api.js');
        const inWasm = [], roundTrip = [];
        let bytes = 0;
        // Untimed first: V8 compiles a function on its first call and optimizes it once hot;
        // the first series measured would otherwise carry that for every model after it.
        for (let i = 0; i < Math.min(n, 10); i++) await engine().call('estimate', { config, name: id, library: 'transformers', mode });
        for (let i = 0; i < n; i++) {
          const t0 = performance.now();
          const reply = await engine().call('estimate', { config, name: id, library: 'transformers', mode });
          roundTrip.push(performance.now() - t0);
          inWasm.push(engine().lastMs.estimate);
          if (reply.error) throw new Error(reply.error.message);
          bytes = Object.keys(reply.module_sizes).length;
        }
        return { inWasm, roundTrip, modules: bytes };
      }, { config, id, mode, n });
      results.estimate[`${id} (${mode})`] = {
        wasm_ms_median: round(median(r.inWasm), 2), wasm_ms_min: round(Math.min(...r.inWasm), 2),
        round_trip_ms_median: round(median(r.roundTrip), 2), modules: r.modules,
      };
    }
  }
  await context.close();
} finally {
  await browser.close();
  await site.close();
  await hub.close();
}

console.log('first visit, fresh browser context (ms since navigation start; median):');
for (const [id, r] of Object.entries(results.first_visit)) {
  console.log(`  ${id}: result ${r.result_ms} ms (app.js running at ${r.app_start_ms}, Hub answers in at ${r.model_fetched_ms}, ` +
    `module ready at ${r.wasm_ready_ms}, first estimate ${r.estimate_ms} ms)`);
}
console.log('first result for a cached model (ms since navigation start; median of reloads):');
for (const [id, r] of Object.entries(results.first_result)) {
  console.log(`  ${id}: result ${r.result_ms} ms (app.js running at ${r.app_start_ms}, Hub answers in at ${r.model_fetched_ms}, ` +
    `module ready at ${r.wasm_ready_ms}, estimate ${r.estimate_ms} ms)`);
}
console.log('per estimate, in the worker (WASM) and as the page sees it (+ postMessage + JSON.parse):');
for (const [k, r] of Object.entries(results.estimate)) {
  console.log(`  ${k}: ${r.wasm_ms_median} ms median (min ${r.wasm_ms_min}), round trip ${r.round_trip_ms_median} ms; ${r.modules} modules`);
}
console.log(`memfit web bench: ${JSON.stringify(results)}`);
