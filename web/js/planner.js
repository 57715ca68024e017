// @ts-check
// The device-map planner panel: GPUs × count, CPU RAM and disk → which layers go where. It sends
// the documented plan request (docs/api.md) for the model on the page and draws the reply, as
// `memfit plan --json` prints it; while core answers with an error it says so, politely.

import { engine, isError } from './api.js';
import { copy } from './copy.js';
import { el, replaceChildren } from './dom.js';
import { convertBytes } from './format.js';
import { gpuById } from './gpus.js';
import { $, current } from './page.js';
import { modelFields, noModelYet, panelError, redrawOnInput, unavailable } from './panels.js';

/** @typedef {import('./state.js').State} State */

/** The panel's last reply (`memfit plan --json`). @type {import('./api.js').PlanReply | import('./api.js').PipelineReply | null} */
let plan = null;

/** The plan request for a model request and the panel's state. @param {any} model @param {State} s */
export function planRequest(model, s) {
  // The page's mode picks the class, as `memfit plan --compat accelerate` does.
  const { dtypes, ...fields } = model;
  const gpu = gpuById(s.gpu);
  /** @type {Object<string, string>} */
  const maxMemory = {};
  for (let i = 0; i < s.gpus; i++) maxMemory[String(i)] = `${gpu?.gib}GiB`;
  maxMemory.cpu = `${s.cpu}GiB`;
  const options = { strategy: s.strategy, dtype: s.pdtype, no_disk: !s.disk };
  if (s.hosts > 1) return { ...fields, nodes: nodesSpec(s), link: s.link, ...options };
  return { ...fields, max_memory: maxMemory, ...options };
}

/**
 * `memfit plan --nodes`' text for the panel's hosts: each one alike (its GPUs, their kind, its RAM).
 * @param {State} s
 */
export function nodesSpec(s) {
  const gpu = gpuById(s.gpu);
  const budgets = [...Array(s.gpus).keys()].map((i) => `${i}:${gpu?.gib}GiB`);
  budgets.push(`cpu:${s.cpu}GiB`);
  if (s.gpus > 0 && gpu) budgets.push(`gpu:${gpu.name}`);
  return [...Array(s.hosts).keys()].map((h) => `host${h + 1}=${budgets.join(',')}`).join(';');
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

/** A multi-host reply: the link and speed first, then each host's own map. @param {any} reply */
function renderPipeline(reply) {
  const perToken = reply.bytes_per_boundary > 0
    ? `${convertBytes(reply.bytes_per_boundary)} of hidden states per step cross each of ${reply.nodes.length - 1} host boundaries`
    : 'the hidden size is unknown: no estimate of the traffic';
  const out = [el('p', { class: 'pipeline' },
    `${reply.nodes.length} hosts, one pipeline stage each: ${perToken}. `,
    `Estimated decode: ~${reply.decode_tokens_per_s.toFixed(1)} tokens/s at batch ${reply.batch}` +
    (reply.micro_batches > 1 ? `, ~${reply.pipelined_tokens_per_s.toFixed(1)} tokens/s with ${reply.micro_batches} micro-batches in flight.` : '.'))];
  for (const node of reply.nodes) {
    out.push(el('h3', { class: 'host', 'data-host': node.name },
      `${node.name}: ${node.first_unit} … ${node.last_unit} (${node.units} units)`));
    out.push(...renderPlan(node.plan));
  }
  if (Array.isArray(reply.explain) && reply.explain.length) {
    out.push(el('details', { class: 'explain' }, el('summary', {}, 'How the stages were split'),
      el('ol', {}, reply.explain.map((/** @type {string} */ x) => el('li', {}, x)))));
  }
  return out;
}

async function refreshPlanner() {
  const out = $('plan-out');
  if (!$('planner').open) return;
  const fields = modelFields();
  if (!fields || !current.report) {
    plan = null;
    $('copy-plan').disabled = true;
    replaceChildren(out, noModelYet());
    return;
  }
  /** @type {import('./api.js').PlanReply | import('./api.js').PipelineReply | import('./api.js').ErrorReply} */
  const reply = await engine().call('plan', planRequest(fields, current.state));
  plan = isError(reply) ? null : reply;
  $('copy-plan').disabled = !plan;
  if (isError(reply)) replaceChildren(out, unavailable(reply.error, 'The planner'));
  else replaceChildren(out, ...(Array.isArray(/** @type {any} */ (reply).nodes) ? renderPipeline(reply) : renderPlan(reply)));
}

/** Draws the panel again (when it is open) for the model on the page. */
export function showPlan() {
  refreshPlanner().catch(panelError);
}

export function setupPlanner() {
  redrawOnInput(['plan-gpu', 'plan-gpus', 'plan-cpu', 'plan-disk', 'plan-strategy', 'plan-dtype', 'plan-hosts', 'plan-link'],
    refreshPlanner);
  $('planner').addEventListener('toggle', showPlan);
  $('copy-plan').addEventListener('click', () => plan && copy(JSON.stringify(plan, null, 2) + '\n', 'Plan', 'copy-plan-status'));
}
