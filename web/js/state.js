// @ts-check
// The page's whole state as plain values, and its URL form: the share link. Only what differs
// from the defaults is written, so `/?model=gpt2` is a complete link. The access token is never
// part of the state. Pure functions: tests/web/state.test.mjs runs them under node. The choices
// come from core (supported.js: the module's supported(), written by web/tools/build.mjs).

import { SUPPORTED } from './supported.js';

/** The estimate's dtypes (its rows) by mode, each mode's whole list being its default. */
/** @type {{memfit: string[], accelerate: string[]}} */
export const MODE_DTYPES = SUPPORTED.dtypes;
export const ALL_DTYPES = MODE_DTYPES.memfit;
export const DEFAULT_ENDPOINT = 'https://huggingface.co';

/**
 * @typedef {object} State
 * @property {string} model       model id or Hub URL as typed
 * @property {string} revision
 * @property {'auto' | 'transformers' | 'timm'} library
 * @property {'memfit' | 'accelerate'} mode
 * @property {'config' | 'exact'} source      exact: safetensors headers by HTTP Range
 * @property {string[] | null} dtypes          null: the mode's default list
 * @property {string} cls                      model class override
 * @property {string} endpoint
 * @property {boolean} offline                 bundled catalog only
 * @property {string} gpu       planner: GPU id
 * @property {number} gpus      planner: GPU count
 * @property {number} cpu       planner: CPU RAM, GiB
 * @property {boolean} disk     planner: may offload to disk
 * @property {string} strategy  planner
 * @property {string} pdtype    planner: dtype of the weights
 * @property {number} hosts     planner: hosts, one pipeline stage each (1: one machine)
 * @property {string} link      planner: network between the hosts
 * @property {number} context   run panel: tokens per sequence (0: the model's default, min(4096, its maximum))
 * @property {number} batch
 * @property {string} kv        KV-cache dtype ('' = the weights')
 * @property {string} rdtype    run panel: weights dtype ('' = the config's torch_dtype)
 * @property {string} engine
 * @property {string} train     none | full | lora | qlora
 * @property {number} rank
 * @property {string} targets
 * @property {string} optimizer
 * @property {boolean} gc       gradient checkpointing
 * @property {string} rgpu      run panel: GPU id
 */

/** @type {State} */
export const DEFAULTS = Object.freeze({
  model: '', revision: 'main', library: 'auto', mode: 'memfit', source: 'config', dtypes: null,
  cls: '', endpoint: DEFAULT_ENDPOINT, offline: false,
  gpu: '4090', gpus: 1, cpu: 64, disk: true, strategy: 'auto', pdtype: 'float16', hosts: 1, link: '10Gbps',
  context: 0, batch: 1, kv: '', rdtype: '', engine: 'transformers', train: 'none', rank: 8,
  targets: '', optimizer: 'adamw', gc: false, rgpu: '4090',
});

// state key → URL parameter (short, stable: links live in chats and issues)
const PARAMS = {
  model: 'model', revision: 'revision', library: 'library', mode: 'mode', source: 'source',
  dtypes: 'dtypes', cls: 'class', endpoint: 'endpoint', offline: 'offline',
  gpu: 'gpu', gpus: 'gpus', cpu: 'cpu', disk: 'disk', strategy: 'strategy', pdtype: 'pdtype', hosts: 'hosts', link: 'link',
  context: 'context', batch: 'batch', kv: 'kv', rdtype: 'rdtype', engine: 'engine', train: 'train', rank: 'rank',
  targets: 'targets', optimizer: 'optimizer', gc: 'gc', rgpu: 'rgpu',
};

/** The values a state key may take (the inputs offer these; '' means "core's default"). */
export const CHOICES = {
  library: ['auto', 'transformers', 'timm'],
  mode: ['memfit', 'accelerate'],
  source: ['config', 'exact'],
  strategy: SUPPORTED.strategies,
  pdtype: ALL_DTYPES,
  link: ['1Gbps', '10Gbps', '25Gbps', '100Gbps', '400Gbps'],
  train: ['none', ...SUPPORTED.train_methods],
  kv: ['', ...SUPPORTED.kv_dtypes],
  rdtype: ['', ...SUPPORTED.weight_dtypes],
  engine: SUPPORTED.engines,
  optimizer: SUPPORTED.optimizers,
};

const LIMITS = { gpus: [0, 64], hosts: [1, 64], cpu: [0, 1 << 20], context: [0, 1 << 24], batch: [1, 4096], rank: [1, 4096] };

/**
 * The state a URL's query describes (unknown or invalid values fall back to the defaults).
 * @param {string | URLSearchParams} query
 * @returns {State}
 */
export function stateFromQuery(query) {
  const q = typeof query === 'string' ? new URLSearchParams(query) : query;
  /** @type {any} */
  const s = { ...DEFAULTS };
  for (const [key, param] of Object.entries(PARAMS)) {
    const raw = q.get(param);
    if (raw === null) continue;
    const def = /** @type {any} */ (DEFAULTS)[key];
    if (key === 'dtypes') {
      const list = raw.split(',').map((d) => d.trim()).filter((d) => ALL_DTYPES.includes(d));
      s.dtypes = list.length ? [...new Set(list)] : null;
    } else if (typeof def === 'boolean') {
      s[key] = raw === '1' || raw === 'true';
    } else if (typeof def === 'number') {
      const n = Number(raw);
      const [lo, hi] = /** @type {any} */ (LIMITS)[key] || [0, Number.MAX_SAFE_INTEGER];
      if (Number.isFinite(n) && n >= lo && n <= hi) s[key] = Math.round(n);
    } else if (key in CHOICES) {
      if (/** @type {any} */ (CHOICES)[key].includes(raw)) s[key] = raw;
    } else {
      s[key] = raw.slice(0, 2048);
    }
  }
  if (s.mode === 'accelerate') s.source = 'config';  // exact tensors are memfit's own mode
  return s;
}

/**
 * The query string of a state ("" when everything is default), in a stable order.
 * @param {State} state
 */
export function queryFromState(state) {
  const q = new URLSearchParams();
  for (const [key, param] of Object.entries(PARAMS)) {
    const v = /** @type {any} */ (state)[key];
    const def = /** @type {any} */ (DEFAULTS)[key];
    if (key === 'dtypes') {
      if (v && v.length) q.set(param, v.join(','));
    } else if (typeof def === 'boolean') {
      if (!!v !== def) q.set(param, v ? '1' : '0');
    } else if (v !== undefined && v !== null && v !== def && v !== '') {
      q.set(param, String(v));
    }
  }
  return q.toString();
}

/**
 * The dtypes a request should ask for: null when they are the mode's default list.
 * @param {State} state
 */
export function requestDtypes(state) {
  if (!state.dtypes) return null;
  const defaults = MODE_DTYPES[state.mode];
  const same = state.dtypes.length === defaults.length && defaults.every((d, i) => state.dtypes?.[i] === d);
  return same ? null : state.dtypes;
}

const REPO_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)?$/;

/** The Hub's (and memfit CLI's) rule for a repo id. @param {string} id */
export function isRepoId(id) {
  return id.length <= 200 && REPO_RE.test(id) && !id.includes('..');
}

/**
 * A model id, or a Hub URL of a model (…/org/name, …/org/name/tree/rev, …/blob/rev/file),
 * → {id, revision?}; null when it is neither.
 * @param {string} input
 * @returns {{id: string, revision?: string} | null}
 */
export function parseModelInput(input) {
  const text = input.trim();
  if (!text) return null;
  if (isRepoId(text)) return { id: text };
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text);
  if (!hasScheme && !/^[^/]+\.[^/]+\//.test(text)) return null;  // "huggingface.co/…" or a URL
  let url;
  try {
    url = new URL(hasScheme ? text : `https://${text}`);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  const parts = url.pathname.split('/').filter(Boolean).map((p) => {
    try { return decodeURIComponent(p); } catch { return p; }
  });
  if (parts[0] === 'models' || parts[0] === 'api') return null;
  if (parts.length === 0) return null;
  let id = parts.length >= 2 && !['tree', 'blob', 'resolve'].includes(parts[1]) ? `${parts[0]}/${parts[1]}` : parts[0];
  const rest = parts.slice(id.split('/').length);
  if (!isRepoId(id)) return null;
  if (rest.length >= 2 && ['tree', 'blob', 'resolve'].includes(rest[0])) return { id, revision: rest[1] };
  return { id };
}
