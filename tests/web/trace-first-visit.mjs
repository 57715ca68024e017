#!/usr/bin/env node
// Where a first visit's time goes: one fresh browser context loads ?model=ID from the mock Hub
// under Chrome's tracing, and this prints (ms since navigation start) every request's start and
// end, the user-timing marks, the wasm compile/instantiate events and each thread's long tasks.
//   MEMFIT_WEB_DIR=build/web node tests/web/trace-first-visit.mjs [model id] [trace.json]
import { writeFileSync } from 'node:fs';
import { startMockHub } from './support/mock-hub.mjs';
import { serveStatic } from '../../web/tools/serve.mjs';
import { launch, openPage, settle, settleQuietly } from './support/browser.mjs';
import { WEB_DIR } from './support/paths.mjs';

const id = process.argv[2] || 'meta-llama/Meta-Llama-3-70B';
const out = process.argv[3] || '';
const CATEGORIES = ['devtools.timeline', 'blink.user_timing', 'loading', 'v8', 'v8.wasm', 'v8.execute',
  'disabled-by-default-v8.wasm.detailed', 'disabled-by-default-devtools.timeline', 'toplevel', 'blink', 'netlog'];

const hub = await startMockHub();
const site = await serveStatic(WEB_DIR);
const browser = await launch();
let trace;
try {
  // one untimed visit first: the browser's own start-up (its first renderer, caches of its own)
  // is not a first visit's
  { const { page, context } = await openPage(browser); await page.goto(`${site.url}/?${new URLSearchParams({ model: 'gpt2', endpoint: hub.url })}`); await settle(page, 60000); await context.close(); }
  const { page, context } = await openPage(browser);
  await browser.startTracing(undefined, { categories: CATEGORIES });
  await page.goto(`${site.url}/?${new URLSearchParams({ model: id, endpoint: hub.url })}`);
  await settleQuietly(page, 60000);
  console.log('timeline:', await page.evaluate(() => document.documentElement.dataset.timeline));
  trace = JSON.parse((await browser.stopTracing()).toString('utf8'));
  await context.close();
} finally {
  await browser.close();
  await site.close();
  await hub.close();
}
if (out) writeFileSync(out, JSON.stringify(trace));

const events = trace.traceEvents;
const threads = new Map();
for (const e of events) if (e.ph === 'M' && e.name === 'thread_name') threads.set(`${e.pid}:${e.tid}`, e.args.name);
const nav = events.find((e) => e.name === 'navigationStart' && e.args?.data?.documentLoaderURL?.includes('model='))
  || events.find((e) => e.name === 'navigationStart' && e.args?.data?.isLoadingMainFrame);
const t0 = nav.ts;
const ms = (/** @type {number} */ ts) => ((ts - t0) / 1000).toFixed(1);
const rows = [];
const requests = new Map();
for (const e of events) {
  const d = e.args?.data;
  if (e.name === 'ResourceSendRequest') requests.set(d.requestId, { url: d.url, start: e.ts });
  else if (e.name === 'ResourceReceiveResponse' && requests.has(d.requestId)) requests.get(d.requestId).response = e.ts;
  else if (e.name === 'ResourceFinish' && requests.has(d.requestId)) requests.get(d.requestId).end = e.ts;
}
for (const r of requests.values()) {
  rows.push([r.start, `request ${r.url.replace(/^https?:\/\/[^/]+/, '').slice(0, 70)}: response ${r.response ? ms(r.response) : '?'}, done ${r.end ? ms(r.end) : '?'}`]);
}
for (const e of events) {
  if (e.ts < t0) continue;
  const th = threads.get(`${e.pid}:${e.tid}`) || `${e.pid}:${e.tid}`;
  const dur = (e.dur || 0) / 1000;
  if (e.cat?.includes('user_timing') && e.name.startsWith('memfit')) rows.push([e.ts, `mark ${e.name} [${th}]`]);
  else if (e.cat?.includes('wasm') && (dur > 0.5 || e.ph !== 'X')) rows.push([e.ts, `${e.name} ${dur.toFixed(1)} ms [${th}]`]);
  else if (e.ph === 'X' && dur >= 3 && /RunTask|ParseHTML|EvaluateScript|v8.evaluateModule|FunctionCall|Layout|Paint|UpdateLayoutTree|v8.compile|V8.GC|MajorGC|MinorGC|v8.run|TimerFire|FireAnimationFrame|ResourceFinish|EventDispatch/.test(e.name)) {
    rows.push([e.ts, `${e.name} ${dur.toFixed(1)} ms [${th}]${e.args?.data?.url ? ' ' + e.args.data.url.replace(/^https?:\/\/[^/]+/, '') : ''}${e.args?.data?.functionName ? ' ' + e.args.data.functionName : ''}`]);
  }
}
const lazy = events.filter((e) => e.name === 'wasm.CompileLazy');
console.log(`wasm.CompileLazy: ${lazy.length} functions, ${(lazy.reduce((s, e) => s + (e.dur || 0), 0) / 1000).toFixed(1)} ms`);
// What each of the worker's calls paid for (the warm-ups, then the page's first call): the
// functions V8 compiled lazily inside it, and the optimizing tier's compiles beside it.
const top = events.filter((e) => e.name === 'wasm.TopTierCompilation' || e.name === 'wasm.ExecuteCompilationUnits');
for (const call of events.filter((e) => e.name === 'FunctionCall' && /worker\.js/.test(e.args?.data?.url || ''))) {
  const end = call.ts + (call.dur || 0);
  const inside = lazy.filter((e) => e.ts >= call.ts && e.ts < end && e.tid === call.tid);
  const beside = top.filter((e) => e.name === 'wasm.TopTierCompilation' && e.ts < end && e.ts + (e.dur || 0) > call.ts);
  const sum = (/** @type {any[]} */ es) => (es.reduce((a, e) => a + (e.dur || 0), 0) / 1000).toFixed(1);
  console.log(`call ${call.args.data.functionName} at ${ms(call.ts)}: ${((call.dur || 0) / 1000).toFixed(1)} ms; ` +
    `inside it ${inside.length} lazy compiles (${sum(inside)} ms); top-tier compiles beside it: ${beside.length} (${sum(beside)} ms)`);
}
for (const [ts, text] of rows.sort((a, b) => a[0] - b[0])) console.log(`${ms(ts).padStart(7)}  ${text}`);
