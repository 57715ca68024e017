// @ts-check
// The inputs ⇄ the state ⇄ the URL. The choices of every select (and the dtype boxes) come from
// core through supported.js; writeInputs draws a state, readInputs reads one back.

import { el, replaceChildren } from './dom.js';
import { withCommas } from './format.js';
import { GPUS, gpuById } from './gpus.js';
import { $, clampInt, current } from './page.js';
import { ALL_DTYPES, CHOICES, DEFAULT_ENDPOINT, MODE_DTYPES, queryFromState } from './state.js';

/** @typedef {import('./state.js').State} State */

// What a choice is called on the page, where that is not its own name.
const LABELS = /** @type {Object<string, Object<string, string>>} */ ({
  rdtype: { '': 'from config' },
  kv: { '': 'as the weights' },
  train: { none: 'none (inference)', full: 'full fine-tuning', lora: 'LoRA', qlora: 'QLoRA' },
});

// select id → the state key whose choices it offers
const SELECTS = {
  'plan-strategy': 'strategy', 'plan-dtype': 'pdtype', 'plan-link': 'link', 'run-dtype': 'rdtype', 'run-kv': 'kv',
  'run-engine': 'engine', 'run-train': 'train', 'run-optimizer': 'optimizer',
};

/** Fills the selects and the dtype boxes with core's choices (once, before the first write). */
export function fillChoices() {
  for (const [id, key] of Object.entries(SELECTS)) {
    const labels = LABELS[key] || {};
    replaceChildren($(id), /** @type {any} */ (CHOICES)[key].map((/** @type {string} */ v) => el('option', { value: v }, labels[v] ?? v)));
  }
  for (const id of ['plan-gpu', 'run-gpu']) {
    replaceChildren($(id), GPUS.map((g) => el('option', { value: g.id }, `${g.name} — ${g.gib} GiB`)));
  }
  $('dtypes').append(...ALL_DTYPES.map((d) => el('label', {}, el('input', { type: 'checkbox', name: 'dtype', value: d }), ` ${d}`)));
}

export function writeInputs() {
  const { state } = current;
  $('model').value = state.model;
  $('revision').value = state.revision;
  $('library').value = state.library;
  for (const r of document.querySelectorAll('input[name=mode]')) /** @type {HTMLInputElement} */ (r).checked = r.getAttribute('value') === state.mode;
  $('source').value = state.source;
  $('source').disabled = state.mode === 'accelerate';
  writeDtypes();
  $('class').value = state.cls;
  $('endpoint').value = state.endpoint === DEFAULT_ENDPOINT ? '' : state.endpoint;
  $('offline').checked = state.offline;
  $('plan-gpu').value = gpuById(state.gpu)?.id || '4090';
  $('plan-gpus').value = state.gpus;
  $('plan-cpu').value = state.cpu;
  $('plan-disk').checked = state.disk;
  $('plan-strategy').value = state.strategy;
  $('plan-dtype').value = state.pdtype;
  $('plan-hosts').value = String(state.hosts);
  $('plan-link').value = state.link;
  $('run-gpu').value = gpuById(state.rgpu)?.id || '4090';
  $('run-context').value = String(state.context ? Math.min(20, Math.max(7, Math.round(Math.log2(state.context)))) : 12);
  $('run-context-out').value = state.context ? withCommas(state.context) : 'the model’s default (≤ 4,096)';
  $('run-batch').value = String(Math.min(64, state.batch));
  $('run-batch-out').value = String(state.batch);
  $('run-dtype').value = state.rdtype;
  $('run-kv').value = state.kv;
  $('run-engine').value = state.engine;
  $('run-train').value = state.train;
  $('run-rank').value = state.rank;
  $('run-targets').value = state.targets;
  $('run-optimizer').value = state.optimizer;
  $('run-gc').checked = state.gc;
}

/** The dtype boxes of the state (the mode's list when it has none; accelerate has no bfloat16). */
export function writeDtypes() {
  const { state } = current;
  const list = state.dtypes || MODE_DTYPES[state.mode];
  for (const box of document.querySelectorAll('input[name=dtype]')) {
    const b = /** @type {HTMLInputElement} */ (box);
    b.checked = list.includes(b.value);
    b.disabled = !MODE_DTYPES[state.mode].includes(b.value);
  }
}

/** @returns {State} */
export function readInputs() {
  const mode = /** @type {any} */ (document.querySelector('input[name=mode]:checked'))?.value || 'memfit';
  const dtypes = [...document.querySelectorAll('input[name=dtype]:checked:not(:disabled)')].map((b) => /** @type {HTMLInputElement} */ (b).value);
  const endpoint = ($('endpoint').value || '').trim().replace(/\/+$/, '') || DEFAULT_ENDPOINT;
  const s = {
    ...current.state,
    model: $('model').value.trim(),
    revision: $('revision').value.trim() || 'main',
    library: $('library').value,
    mode,
    source: mode === 'accelerate' ? 'config' : $('source').value,
    dtypes: dtypes.length ? dtypes : null,
    cls: $('class').value.trim(),
    endpoint,
    offline: $('offline').checked,
    gpu: $('plan-gpu').value,
    gpus: clampInt($('plan-gpus').value, 0, 64, 1),
    cpu: clampInt($('plan-cpu').value, 0, 1 << 20, 64),
    disk: $('plan-disk').checked,
    strategy: $('plan-strategy').value,
    pdtype: $('plan-dtype').value,
    hosts: clampInt($('plan-hosts').value, 1, 64, 1),
    link: $('plan-link').value,
    rgpu: $('run-gpu').value,
    batch: clampInt($('run-batch').value, 1, 4096, 1),
    rdtype: $('run-dtype').value,
    kv: $('run-kv').value,
    engine: $('run-engine').value,
    train: $('run-train').value,
    rank: clampInt($('run-rank').value, 1, 4096, 8),
    targets: $('run-targets').value.trim(),
    optimizer: $('run-optimizer').value,
    gc: $('run-gc').checked,
  };
  // the dtypes of the mode's default list are written as "default" (no parameter)
  const defaults = MODE_DTYPES[/** @type {'memfit' | 'accelerate'} */ (mode)];
  if (s.dtypes && s.dtypes.length === defaults.length && defaults.every((d, i) => s.dtypes?.[i] === d)) s.dtypes = null;
  return /** @type {State} */ (s);
}

/** The share link: the state's query (a model from the visitor's files is not in it). */
export function shareUrl() {
  const { state, model } = current;
  const q = queryFromState(model && model.origin === 'local' ? { ...state, model: '' } : state);
  return `${location.origin}${location.pathname}${q ? `?${q}` : ''}`;
}

export function updateUrl() {
  history.replaceState(null, '', shareUrl());
}
