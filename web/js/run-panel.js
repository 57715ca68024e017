// @ts-check
// The "will it run?" panel: inference and training on a GPU the visitor picks. It sends the
// documented inference request (docs/api.md) for the model on the page and draws the reply: the
// verdict, the parts of each total as stacked bars against the usable memory.

import { engine, isError } from './api.js';
import { el, replaceChildren, svg } from './dom.js';
import { convertBytes, withCommas } from './format.js';
import { $, current } from './page.js';
import { INFERENCE_PARTS, fitLine, inferenceRequest } from './inference.js';
import { modelFields, noModelYet, panelError, redrawOnInput, unavailable } from './panels.js';

/** @typedef {import('./state.js').State} State */

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
    const line = fitLine(reply);
    if (line) out.push(el('p', { class: 'fit-line' }, line));
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

async function refreshRun() {
  const out = $('run-out');
  if (!$('run').open) return;
  if (current.model?.repo) {
    replaceChildren(out, el('p', { class: 'help' }, 'This repo’s table above is for the GPU and context chosen here ' +
      '(batch, dtypes, engine and training are for one model).'));
    return;
  }
  const fields = modelFields();
  if (!fields || !current.report) { replaceChildren(out, noModelYet()); return; }
  /** @type {import('./api.js').InferenceReply | import('./api.js').ErrorReply} */
  const reply = await engine().call('inference', inferenceRequest(fields, current.state));
  if (isError(reply)) replaceChildren(out, unavailable(reply.error, 'Inference and training estimates'));
  else replaceChildren(out, ...renderRun(reply));
}

/** Draws the panel again (when it is open) for the model on the page. */
export function showRun() {
  refreshRun().catch(panelError);
}

/** The LoRA fields only for LoRA and QLoRA, the training fields only for training. */
function showTrainingFields() {
  const train = $('run-train').value;
  for (const f of document.querySelectorAll('.train-only')) {
    const lora = f.querySelector('#run-rank, #run-targets');
    /** @type {HTMLElement} */ (f).hidden = train === 'none' || (!!lora && train === 'full');
  }
}

export function setupRun() {
  showTrainingFields();
  redrawOnInput(['run-gpu', 'run-context', 'run-batch', 'run-dtype', 'run-kv', 'run-engine', 'run-train', 'run-rank',
    'run-targets', 'run-optimizer', 'run-gc'], refreshRun);
  // the slider moves in powers of two; until it moves, the model's default context is used
  $('run-context').addEventListener('input', () => {
    current.state.context = 2 ** Number($('run-context').value);
    $('run-context-out').value = withCommas(current.state.context);
  });
  $('run-batch').addEventListener('input', () => { $('run-batch-out').value = $('run-batch').value; });
  $('run-train').addEventListener('change', showTrainingFields);
  $('run').addEventListener('toggle', showRun);
}
