// @ts-check
// The device-map planner and the "will it run?" panels. Both send the documented requests
// (docs/api.md: plan, inference) for the model on the page and draw the replies; while core
// answers with an error (e.g. not implemented yet) they say so, politely, and nothing else.

import { engine, isError } from './api.js';
import { el, svg } from './dom.js';
import { convertBytes, withCommas } from './format.js';
import { GPUS, gpuById } from './gpus.js';

/** @typedef {import('./state.js').State} State */

/**
 * A friendly line for an api error reply.
 * @param {{code: string, message: string}} error @param {string} what
 */
export function unavailable(error, what) {
  const notYet = /not implemented/i.test(error.message);
  return el('div', { class: notYet ? 'notice' : 'notice error', role: 'status' },
    el('strong', {}, notYet ? `${what}: not available yet. ` : `${what}: cannot compute. `),
    error.message, el('span', { class: 'code' }, ` (${error.code})`));
}

/** @param {HTMLSelectElement} select @param {string} value */
export function fillGpuSelect(select, value) {
  select.replaceChildren(...GPUS.map((g) => el('option', { value: g.id }, `${g.name} — ${g.gib} GiB`)));
  select.value = gpuById(value)?.id || '4090';
}

// ---------------------------------------------------------------- planner

/** The plan request for a model request and the panel's state. @param {any} model @param {State} s */
export function planRequest(model, s) {
  // The page's mode picks the class, as `memfit plan --compat accelerate` does.
  const { dtypes, ...fields } = model;
  const gpu = gpuById(s.gpu);
  /** @type {Object<string, string>} */
  const maxMemory = {};
  for (let i = 0; i < s.gpus; i++) maxMemory[String(i)] = `${gpu?.gib}GiB`;
  maxMemory.cpu = `${s.cpu}GiB`;
  return { ...fields, max_memory: maxMemory, strategy: s.strategy, dtype: s.pdtype, no_disk: !s.disk };
}

/**
 * Consecutive modules on the same device, with numbered runs folded: "model.layers.0–39".
 * @param {Object<string, number | string>} deviceMap
 * @returns {{device: string, modules: string[]}[]}
 */
export function deviceRanges(deviceMap) {
  /** @type {{device: string, names: string[]}[]} */
  const groups = [];
  for (const [name, device] of Object.entries(deviceMap)) {
    const d = String(device);
    const last = groups[groups.length - 1];
    if (last && last.device === d) last.names.push(name);
    else groups.push({ device: d, names: [name] });
  }
  return groups.map((g) => ({ device: g.device, modules: foldRuns(g.names) }));
}

/** @param {string[]} names */
function foldRuns(names) {
  /** @type {string[]} */
  const out = [];
  let run = null;
  const flush = () => {
    if (run) out.push(run.first === run.last ? `${run.prefix}${run.first}` : `${run.prefix}${run.first}–${run.last}`);
    run = null;
  };
  for (const n of names) {
    const m = /^(.*\.)(\d+)$/.exec(n);
    if (m && run && run.prefix === m[1] && Number(m[2]) === run.last + 1) { run.last += 1; continue; }
    flush();
    if (m) run = { prefix: m[1], first: Number(m[2]), last: Number(m[2]) };
    else out.push(n === '' ? '(the whole model)' : n);
  }
  flush();
  return out;
}

/** @param {string} d */
function deviceLabel(d) {
  return /^\d+$/.test(d) ? `GPU ${d}` : d === 'cpu' ? 'CPU RAM' : d === 'disk' ? 'disk' : d;
}

/** @param {any} reply */
export function renderPlan(reply) {
  const ranges = deviceRanges(reply.device_map || {});
  const bytes = reply.bytes_per_device || {};
  const budgets = reply.max_memory || {};
  const devices = [...new Set([...Object.keys(bytes), ...ranges.map((r) => r.device)])];
  const rows = devices.map((d) => {
    const used = bytes[d] ?? 0;
    const budget = budgets[d];
    const bar = el('span', { class: 'bar' + (budget !== undefined && used > budget ? ' over' : '') });
    bar.style.width = `${budget ? Math.min(100, (used / budget) * 100) : used > 0 ? 100 : 0}%`;
    return el('tr', { 'data-device': d },
      el('th', { scope: 'row' }, deviceLabel(d)),
      el('td', {}, convertBytes(used)),
      el('td', {}, budget !== undefined ? convertBytes(budget) : '—'),
      el('td', { class: 'usage' }, el('span', { class: 'track' }, bar)),
      el('td', { class: 'mods' }, ranges.filter((r) => r.device === d).flatMap((r) => r.modules).join(', ')));
  });
  const out = [
    el('div', { class: 'scroll' }, el('table', { class: 'plan' },
      el('caption', {}, 'Device map: bytes per device against its budget'),
      el('thead', {}, el('tr', {}, ['device', 'bytes', 'budget', 'use', 'modules'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, rows))),
  ];
  if (typeof reply.streamed_bytes === 'number') {
    out.push(el('p', { class: 'streamed' }, reply.streamed_bytes > 0
      ? `Streamed to the GPU on every forward pass (offloaded weights): ${convertBytes(reply.streamed_bytes)}.`
      : 'Nothing is offloaded: no weights are streamed.'));
  }
  if (Array.isArray(reply.explain) && reply.explain.length) {
    out.push(el('details', { class: 'explain' }, el('summary', {}, 'How the map was made'),
      el('ol', {}, reply.explain.map((/** @type {any} */ x) => el('li', {}, typeof x === 'string' ? x : JSON.stringify(x))))));
  }
  return out;
}

// ---------------------------------------------------------------- will it run?

/** The inference request for a model request and the panel's state. @param {any} model @param {State} s */
export function inferenceRequest(model, s) {
  const { dtypes, ...fields } = model;
  /** @type {any} */
  const req = { ...fields, batch: s.batch, engine: s.engine, gpu: s.rgpu };
  if (s.context > 0) req.context = s.context;
  if (s.kv) req.kv_dtype = s.kv;
  if (s.rdtype) req.dtype = s.rdtype;
  if (s.train !== 'none') {
    req.train = { method: s.train, optimizer: s.optimizer, grad_checkpointing: s.gc };
    if (s.train !== 'full') {
      req.train.rank = s.rank;
      if (s.targets) req.train.targets = s.targets;
    }
  }
  return req;
}

const INFERENCE_PARTS = [
  ['weights_bytes', 'weights'], ['kv_cache_bytes', 'KV cache'], ['activation_bytes', 'activations'],
  ['overhead_bytes', 'overhead'],
];
const TRAINING_PARTS = [
  ['weights_bytes', 'weights'], ['gradient_bytes', 'gradients'], ['master_weights_bytes', 'fp32 master weights'],
  ['optimizer_bytes', 'optimizer states'], ['activation_bytes', 'activations'], ['overhead_bytes', 'overhead'],
];

/**
 * A stacked bar of the parts of a total, with a line at the usable memory when known.
 * @param {string} title @param {any} part @param {string[][]} keys @param {number | undefined} limit
 */
function stacked(title, part, keys, limit) {
  const parts = keys.map(([k, label]) => ({ label, bytes: typeof part[k] === 'number' ? part[k] : 0 })).filter((p) => p.bytes > 0);
  const total = typeof part.total_bytes === 'number' ? part.total_bytes : parts.reduce((a, p) => a + p.bytes, 0);
  const scale = Math.max(total, limit || 0, 1);
  const W = 600, H = 34;
  const g = svg('svg', { viewBox: `0 0 ${W} ${H + 4}`, class: 'stacked', role: 'img',
    'aria-label': `${title}: ${convertBytes(total)} — ${parts.map((p) => `${p.label} ${convertBytes(p.bytes)}`).join(', ')}` });
  let x = 0;
  parts.forEach((p, i) => {
    const w = (p.bytes / scale) * W;
    g.append(svg('rect', { x, y: 4, width: Math.max(w, 0.5), height: H - 8, class: `seg s${i}` },
      svg('title', {}, `${p.label}: ${convertBytes(p.bytes)}`)));
    x += w;
  });
  if (limit) {
    const lx = Math.min(W - 1, (limit / scale) * W);
    g.append(svg('line', { x1: lx, x2: lx, y1: 0, y2: H + 4, class: 'limit' }, svg('title', {}, `usable: ${convertBytes(limit)}`)));
  }
  const legend = el('ul', { class: 'legend' }, parts.map((p, i) =>
    el('li', {}, el('span', { class: `swatch s${i}`, 'aria-hidden': 'true' }), `${p.label} ${convertBytes(p.bytes)}`)));
  return el('figure', { class: 'stacked-figure' }, el('figcaption', {}, `${title}: `, el('strong', {}, convertBytes(total))), g, legend);
}

/** @param {any} reply */
export function renderRun(reply) {
  const out = [];
  const fit = reply.fit;
  const limit = fit && typeof fit.usable_bytes === 'number' ? fit.usable_bytes : undefined;
  if (fit) {
    const gpu = fit.gpu && fit.gpu.name ? fit.gpu.name : 'the GPU';
    const verdict = fit.fits
      ? el('p', { class: 'verdict fits' }, el('strong', {}, 'Fits'), ` on one ${gpu} (${fit.for || 'inference'}).`)
      : el('p', { class: 'verdict' }, el('strong', {}, typeof fit.gpus_needed === 'number' && fit.gpus_needed > 0
        ? `Needs ${fit.gpus_needed} × ${gpu}` : `Does not fit on ${gpu}`), ` (${fit.for || 'inference'}).`);
    out.push(verdict);
    const facts = [];
    if (typeof fit.max_context === 'number') facts.push(`largest context that fits: ${withCommas(fit.max_context)} tokens`);
    if (typeof fit.max_batch === 'number') facts.push(`largest batch: ${withCommas(fit.max_batch)}`);
    if (fit.tokens_per_second && typeof fit.tokens_per_second.decode === 'number') {
      facts.push(`≈ ${fit.tokens_per_second.decode.toFixed(1)} tokens/s decode (${fit.tokens_per_second.label || 'estimate'})`);
    }
    if (facts.length) out.push(el('p', { class: 'facts' }, facts.join(' · ')));
  }
  if (reply.inference) {
    const i = reply.inference;
    out.push(stacked(`Inference at context ${withCommas(i.context ?? 0)} × batch ${i.batch ?? 1}`, i, INFERENCE_PARTS,
      fit && fit.for !== 'training' ? limit : undefined));
    if (Array.isArray(i.notes) && i.notes.length) out.push(el('ul', { class: 'notes' }, i.notes.map((/** @type {string} */ n) => el('li', {}, n))));
  }
  if (reply.training) {
    const t = reply.training;
    out.push(stacked(`Training (${t.method ?? ''}${t.optimizer ? `, ${t.optimizer}` : ''})`, t, TRAINING_PARTS,
      fit && fit.for === 'training' ? limit : undefined));
    if (typeof t.trainable_parameters === 'number') out.push(el('p', { class: 'facts' }, `${withCommas(t.trainable_parameters)} trainable parameters`));
    if (Array.isArray(t.notes) && t.notes.length) out.push(el('ul', { class: 'notes' }, t.notes.map((/** @type {string} */ n) => el('li', {}, n))));
  }
  return out;
}

/** Runs fn at most once per `ms` of quiet. @param {() => void} fn @param {number} ms */
export function debounce(fn, ms) {
  /** @type {any} */
  let t = null;
  return () => { clearTimeout(t); t = setTimeout(fn, ms); };
}

export { engine, isError };
