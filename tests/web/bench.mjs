#!/usr/bin/env node
// The page's speed in Debian's chromium, on 127.0.0.1 (scripts/bench-web.sh runs it; prints,
// asserts nothing — the README records the numbers):
//  - the bundle's size (memfit.wasm + memfit.mjs): gzip -9, and as served (the precompressed
//    .gz files web/tools/build.mjs writes, zopfli-made where zopfli is installed);
//  - first visit (a fresh browser context: nothing cached, the module compiled and called for the
//    first time; COLD_RUNS of each model, default RUNS) and first result for a cached model
//    (after one visit put the site, the module and the Hub's answers in the HTTP cache; reloads):
//    page load → result on screen, median and range, with where the time went and what the
//    first estimate cost — for this build and, with MEMFIT_BASELINE_WEB_DIR, a baseline site
//    beside it in the same run (visits alternate between the two);
//  - the embed widget's first visit on a page of another origin (the same sites, alternating);
//  - per-estimate time in WASM (the api call inside the worker), and the round trip the page
//    sees (postMessage + JSON.parse of the reply), for the models the issue names.
// Environment: as the tests (tests/web/support/paths.mjs); RUNS (page reloads ×2, default 9);
// HUB_LATENCY_MS, BUSY_CORES (below);
// MEMFIT_BASELINE_WEB_DIR, COLD_RUNS (above);
// ESTIMATES (per model and mode, default 31, after 10 untimed ones: the first calls run in V8's
// baseline tier until its optimizing tier takes over, so the median of a handful swings 2×; of 31
// it is the steady state a visitor editing the inputs sees).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { startMockHub } from './support/mock-hub.mjs';
import { startHostPage } from './support/host-page.mjs';
import { serveStatic } from '../../web/tools/serve.mjs';
import { launch, openPage, settle, settleQuietly } from './support/browser.mjs';
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

// HUB_LATENCY_MS: the Hub's answers wait that long — a real network's round trips and TLS
// (default 0: a Hub on 127.0.0.1 answers before the module has compiled what an estimate runs).
const HUB_LATENCY_MS = Number(process.env.HUB_LATENCY_MS || 0);
const hub = await startMockHub({ latencyMs: HUB_LATENCY_MS });
// BUSY_CORES=N: N processes spin for the whole run — a visitor's machine busy with something
// else, where the worker's thread starts late and the page's first call can beat the warm-ups
// (results.early_calls). Both sites run under the same load.
const BUSY_CORES = Number(process.env.BUSY_CORES || 0);
// The sites measured side by side: this build, and the baseline (another build of the site, e.g.
// an earlier commit's: scripts/bench-web.sh assembles it) when MEMFIT_BASELINE_WEB_DIR names one.
// Their visits alternate, so a machine busy with something else slows both alike.
const SITES = [{ name: 'this build', dir: WEB_DIR }];
if (process.env.MEMFIT_BASELINE_WEB_DIR) SITES.unshift({ name: 'baseline', dir: process.env.MEMFIT_BASELINE_WEB_DIR });
const sites = [];
for (const s of SITES) sites.push({ ...s, site: await serveStatic(s.dir) });
const FIRST = MODELS.slice(0, 2);
const browser = await launch();
const busy = Array.from({ length: BUSY_CORES }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
process.on('exit', () => { for (const p of busy) p.kill(); });  // also when the bench fails
const results = { hub_latency_ms: HUB_LATENCY_MS, busy_cores: BUSY_CORES, bundle_gzip_bytes: total, bundle_served_bytes: served, load_average: loadavg(), sites: SITES.map((s) => s.name), first_visit: {}, early_calls: {}, widget: {}, first_result: {}, estimate: {} };
const timeline = (/** @type {any} */ page) => page.evaluate(() => document.documentElement.dataset.timeline || '{}').then(JSON.parse);
const url = (/** @type {{site: {url: string}}} */ s, /** @type {string} */ id) => `${s.site.url}/?${new URLSearchParams({ model: id, endpoint: hub.url })}`;
/** Median and worst of each timeline figure over runs. @param {any[]} runs */
function summary(runs) {
  const of = (/** @type {string} */ k) => runs.map((r) => r[k]).filter((x) => typeof x === 'number');
  /** @type {any} */
  const out = { runs: runs.length };
  for (const k of Object.keys(runs[0] || {})) {
    const xs = of(k);
    if (xs.length) out[k] = { median: round(median(xs), 1), max: round(Math.max(...xs), 1), min: round(Math.min(...xs), 1) };
  }
  return out;
}
try {
  // The browser's own first start-up (its network service, its first renderer) is no visitor's:
  // one untimed visit first.
  {
    const { page, context } = await openPage(browser);
    await page.goto(url(sites[sites.length - 1], 'gpt2'));
    await settle(page, 120000);
    await context.close();
  }
  // First visit: a fresh browser context each time (empty HTTP cache, a new renderer process, a
  // new worker, the module fetched, compiled and called for the first time). The models' order
  // and the sites' order alternate from run to run: neither is always first.
  /** @type {Object<string, any[]>} */
  const cold = {};
  const coldRuns = Number(process.env.COLD_RUNS || RUNS);
  /** COLD_RUNS rounds of each model on each site, both orders alternating from round to round. */
  const alternating = function* () {
    for (let i = 0; i < coldRuns; i++) {
      for (const id of i % 2 ? [...FIRST].reverse() : FIRST) {
        for (const s of i % 2 ? [...sites].reverse() : sites) yield { id, s };
      }
    }
  };
  for (const { id, s } of alternating()) {
    const { page, context } = await openPage(browser);
    await page.goto(url(s, id));
    await settleQuietly(page, 120000);
    (cold[`${s.name}|${id}`] ||= []).push(await timeline(page));
    await context.close();
  }
  for (const [k, runs] of Object.entries(cold)) results.first_visit[k] = summary(runs);
  // Visits whose page call reached the worker no later than its module was ready: the call ran
  // before the warm-ups and compiled what an estimate runs itself (the first estimate's outliers).
  for (const [k, runs] of Object.entries(cold)) {
    results.early_calls[k] = runs.filter((r) => typeof r.first_call === 'number' && r.first_call <= r.wasm_ready)
      .map((r) => round(r.estimate_ms));
  }

  // The embed widget's first visit: a page of another origin with one <memfit-estimate>, a
  // fresh context each time; page load → the widget's result (a MutationObserver on the host
  // page notes when the element's data-state turns 'result', and resolves the promise the bench
  // awaits: no polling on the page being timed, see settleQuietly).
  const host = await startHostPage();
  try {
    for (const { id, s } of alternating()) {
      host.setHtml(`<!doctype html><html><head><script type="module" src="${s.site.url}/embed.js"></script></head>
        <body><memfit-estimate id="w" model="${id}" endpoint="${hub.url}"></memfit-estimate><script>
        window.memfitDone = new Promise((resolve) => new MutationObserver(() => { const st = document.getElementById('w').dataset.state;
          if (st === 'result' || st === 'error') resolve({ state: st, result: performance.now() }); })
          .observe(document.getElementById('w'), { attributes: true, attributeFilter: ['data-state'] }));
        </script></body></html>`);
      const { page, context } = await openPage(browser);
      await page.goto(`${host.url}/`);
      const done = await page.evaluate(() => /** @type {any} */ (window).memfitDone);
      if (done.state !== 'result') throw new Error(`the widget for ${id} (${s.name}) showed an error`);
      (results.widget[`${s.name}|${id}`] ||= []).push({ result: Math.round(done.result) });
      await context.close();
    }
  } finally {
    await host.close();
  }
  for (const [k, runs] of Object.entries(results.widget)) results.widget[k] = summary(runs);

  // First result for a cached model: one visit puts the site, the module and the Hub's answers in
  // the HTTP cache, then reloads, each site's page in turn.
  const pages = [];
  for (const s of sites) pages.push({ s, ...(await openPage(browser)) });
  for (const id of FIRST) {
    for (const p of pages) { await p.page.goto(url(p.s, id)); await settle(p.page, 120000); }
    for (let i = 0; i < Math.max(3, RUNS >> 1); i++) {
      for (const p of pages) {
        await p.page.reload();
        await settleQuietly(p.page, 120000);
        (results.first_result[`${p.s.name}|${id}`] ||= []).push(await timeline(p.page));
      }
    }
  }
  for (const [k, runs] of Object.entries(results.first_result)) results.first_result[k] = summary(runs);
  for (const p of pages.slice(0, -1)) await p.context.close();
  const { page, context } = pages[pages.length - 1];

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
  for (const p of busy) p.kill();
  await browser.close();
  for (const s of sites) await s.site.close();
  await hub.close();
}

/** One line per model and site: the result's median and range, then where its time went. */
function print(/** @type {Object<string, any>} */ phase) {
  for (const [k, r] of Object.entries(phase)) {
    const [site, id] = k.split('|');
    const parts = Object.entries(r).filter(([name]) => name !== 'result' && name !== 'runs' && name !== 'estimate_ms')
      .map(([name, v]) => `${name} ${v.median}`);
    const estimate = r.estimate_ms ? `, its estimate ${r.estimate_ms.median} ms (${r.estimate_ms.min}–${r.estimate_ms.max})` : '';
    console.log(`  ${id} — ${site}: result ${r.result?.median} ms (${r.result?.min}–${r.result?.max})${estimate}` +
      `${parts.length ? `; ${parts.join(', ')}` : ''}; ${r.runs} runs`);
  }
}
const load = results.load_average.map((x) => x.toFixed(2)).join(' ');
console.log(`load average at the start: ${load} (${cpus().length} CPUs); at the end: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log(`the Hub's latency: ${HUB_LATENCY_MS} ms per answer (HUB_LATENCY_MS); ${BUSY_CORES} cores kept busy (BUSY_CORES)`);
console.log('first visit, fresh browser context (ms since navigation start; median (min–max), ' +
  'then the medians of when each step was done):');
print(results.first_visit);
for (const [k, estimates] of Object.entries(results.early_calls)) {
  if (estimates.length) {
    console.log(`  ${k.replace('|', ' — ')}: in ${estimates.length} of ${results.first_visit[k].runs} visits the call came ` +
      `before the module was ready (before the warm-ups); those estimates: ${estimates.join(', ')} ms`);
  }
}
console.log('the embed widget on another origin, fresh context (ms since the host page\'s navigation start):');
print(results.widget);
console.log('first result for a cached model (ms since navigation start; reloads):');
print(results.first_result);
console.log('per estimate, in the worker (WASM) and as the page sees it (+ postMessage + JSON.parse), this build:');
for (const [k, r] of Object.entries(results.estimate)) {
  console.log(`  ${k}: ${r.wasm_ms_median} ms median (min ${r.wasm_ms_min}), round trip ${r.round_trip_ms_median} ms; ${r.modules} modules`);
}
console.log(`memfit web bench: ${JSON.stringify(results)}`);
