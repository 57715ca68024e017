// @ts-check
// <memfit-estimate model="org/name" dtypes="float16,int4" gpu="RTX 4090" context="8192"></memfit-estimate>
// — memfit on any page: one <script type="module" src=".../embed.js">, then the element. Shadow
// DOM keeps its styles in and the page's out (`all: initial`); the WASM loads once per page, when
// the first element scrolls into view, in one worker every element shares. Attributes: model
// (required), dtypes, mode (memfit | accelerate), revision, library, endpoint (default the
// Hugging Face Hub), gpu (a name from core's catalogue; default the page's, the RTX 4090) and
// context (tokens; default the model's, min(4,096, its maximum)) for the one-line "does it fit?".
// A repo of another kind (GGUF, diffusers, sentence-transformers, PEFT) shows its report's main
// table, and its one-line answer where the kind has one. Public models only: no token.

import { engine, isError } from './js/api.js';
import { el, replaceChildren } from './js/dom.js';
import { convertBytes, withCommas } from './js/format.js';
import { fitLine, inferenceRequest } from './js/inference.js';
import { errorTitle, estimateRequest, fromHub, ModelError } from './js/model.js';
import { HubError } from './js/hub.js';
import { ALL_DTYPES, DEFAULT_ENDPOINT, queryFromState, DEFAULTS } from './js/state.js';

const CSS = `
:host { all: initial; display: block; contain: content; max-width: 40rem; margin: 8px 0;
  --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --accent: #b35900; --err: #b42318; }
@media (prefers-color-scheme: dark) {
  :host { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --accent: #ffb35c; --err: #ff8f7e; } }
:host([hidden]) { display: none; }
/* the page's rules can still reach the host element itself; everything inherited starts again here */
.box { all: initial; display: block; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  background: var(--bg); color: var(--fg); border: 1px solid var(--line); border-radius: 10px; padding: 12px 14px; }
.title { font-weight: 600; margin: 0 0 2px; overflow-wrap: anywhere; }
.facts, .foot, .status { color: var(--muted); font-size: 12.5px; margin: 0 0 8px; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 4px 8px 4px 0; border-bottom: 1px solid var(--line); }
th { font-weight: 600; font-size: 12.5px; color: var(--muted); }
td.num { white-space: nowrap; }
.err { color: var(--err); margin: 0; overflow-wrap: anywhere; }
.err strong { display: block; }
.fit { margin: 0 0 8px; font-weight: 600; }
.fit.no { color: var(--err); }
a { color: var(--accent); }
.foot { margin: 8px 0 0; }
`;

/** @type {CSSStyleSheet | null} */
let sheet = null;
function styles() {
  if (!sheet && 'replaceSync' in CSSStyleSheet.prototype) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
  }
  return sheet;
}

/** One observer for every element: each computes once it is (nearly) on screen. */
const seen = typeof IntersectionObserver === 'function'
  ? new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (e.isIntersecting) {
        seen?.unobserve(e.target);
        /** @type {MemfitEstimate} */ (e.target).visible();
      }
    }
  }, { rootMargin: '200px' })
  : null;

/**
 * A model: the fit line (core's inference api, as the page's run panel asks it) and the estimate
 * table. A fit that cannot be computed (an unknown GPU name) is said in its place.
 * @param {import('./js/model.js').ModelSource} source @param {string} mode @param {string[]} dtypes
 * @param {string} gpu @param {number} context
 */
async function modelView(source, mode, dtypes, gpu, context) {
  const req = estimateRequest(source, { mode, dtypes: dtypes.length ? dtypes : null });
  const reply = await engine().call('estimate', req);
  if (isError(reply)) throw new ModelError(reply.error.code, reply.error.message);
  const run = await engine().call('inference', inferenceRequest(estimateRequest(source, { mode: 'memfit', dtypes: null }),
    { ...DEFAULTS, rgpu: gpu, context }));
  const line = isError(run) ? `Does it fit? ${run.error.message} (${run.error.code})` : fitLine(run);
  return [
    el('p', { class: 'title' }, reply.name),
    el('p', { class: 'facts' }, `${reply.model_class} · ${withCommas(reply.parameters)} parameters`),
    line ? el('p', { class: `fit${!isError(run) && run.fit?.fits ? '' : ' no'}`, part: 'fit' }, line) : null,
    el('table', {},
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'dtype'), el('th', { scope: 'col' }, 'Largest layer'),
        el('th', { scope: 'col' }, 'Total'), el('th', { scope: 'col' }, 'Training (Adam)'))),
      el('tbody', {}, reply.rows.map((/** @type {any} */ r) => el('tr', { 'data-dtype': r.dtype },
        el('th', { scope: 'row' }, r.dtype), el('td', { class: 'num' }, r.largest_layer),
        el('td', { class: 'num' }, r.total), el('td', { class: 'num' }, r.training))))),
  ];
}

/**
 * A repo of another kind: its report again for the GPU and context (the files are read), its
 * main table (the first), and the kind's one-line answer where it has one.
 * @param {import('./js/repo.js').RepoAnswer} repo @param {string} gpu @param {number} context
 */
async function repoView(repo, gpu, context) {
  const [{ findGpu, GPUS }, { reportWith }, { repoAnswer, repoTable }] =
    await Promise.all([import('./js/gpus.js'), import('./js/repo.js'), import('./js/repo-view.js')]);
  const g = findGpu(gpu);
  if (!g) throw new ModelError('invalid_argument', `gpu: '${gpu}' is not in memfit's catalogue (${GPUS.map((x) => x.name).join(', ')})`);
  /** @type {{gpu_bytes: number, context?: number}} */
  const options = { gpu_bytes: g.bytes };
  if (context > 0) options.context = context;
  const report = await reportWith(repo.request, options);
  const line = repoAnswer(report, `${g.name} (${convertBytes(g.bytes)})`);
  return [
    el('p', { class: 'title' }, repo.request.repo),
    el('p', { class: 'facts' }, report.title || report.kind),
    line ? el('p', { class: `fit${line.fits ? '' : ' no'}`, part: 'fit' }, line.text) : null,
    report.tables.length ? repoTable(report.tables[0], 0) : null,
  ];
}

class MemfitEstimate extends HTMLElement {
  static get observedAttributes() { return ['model', 'dtypes', 'mode', 'revision', 'library', 'endpoint', 'gpu', 'context']; }

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    const s = styles();
    if (s) root.adoptedStyleSheets = [s];
    else root.append(el('style', {}, CSS));
    this.box = el('div', { class: 'box', part: 'box' });
    root.append(this.box);
    this.shown = false;
    this.runs = 0;
    /** @type {AbortController | null} */
    this.controller = null;
  }

  connectedCallback() {
    if (seen) seen.observe(this);
    else this.visible();
  }

  disconnectedCallback() {
    seen?.unobserve(this);
    this.controller?.abort();
  }

  attributeChangedCallback() {
    if (this.shown) this.update();
  }

  visible() {
    this.shown = true;
    this.update();
  }

  async update() {
    const mine = ++this.runs;
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    const model = (this.getAttribute('model') || '').trim();
    const mode = this.getAttribute('mode') === 'accelerate' ? 'accelerate' : 'memfit';
    const dtypes = (this.getAttribute('dtypes') || '').split(',').map((d) => d.trim()).filter((d) => ALL_DTYPES.includes(d));
    const endpoint = (this.getAttribute('endpoint') || DEFAULT_ENDPOINT).replace(/\/+$/, '');
    const library = /** @type {any} */ (['transformers', 'timm'].includes(this.getAttribute('library') || '') ? this.getAttribute('library') : 'auto');
    const revision = this.getAttribute('revision') || 'main';
    this.dataset.state = 'loading';
    replaceChildren(this.box, el('p', { class: 'title' }, model || 'memfit'), el('p', { class: 'status', role: 'status' }, 'Estimating memory…'));
    const gpu = (this.getAttribute('gpu') || '').trim() || DEFAULTS.rgpu;
    const context = Math.max(0, Math.min(1 << 24, Math.round(Number(this.getAttribute('context')) || 0)));
    try {
      if (!model) throw new ModelError('input', 'the element needs a model attribute (org/name)');
      const source = await fromHub({ input: model, revision, library, endpoint, signal: controller.signal, timeoutMs: 20000 });
      const page = new URL('./index.html', import.meta.url);
      page.search = queryFromState({ ...DEFAULTS, model, mode, revision, library, dtypes: dtypes.length ? dtypes : null, endpoint, context, rgpu: gpu });
      const foot = el('p', { class: 'foot' }, source.origin === 'catalog' ? 'From memfit’s bundled catalog · ' : '',
        el('a', { href: page.href, target: '_blank', rel: 'noopener noreferrer' }, 'Details in memfit'));
      const shown = source.repo ? await repoView(source.repo, gpu, context) : await modelView(source, mode, dtypes, gpu, context);
      if (mine !== this.runs) return;
      replaceChildren(this.box, ...shown, foot);
      this.dataset.state = 'result';
    } catch (e) {
      if (mine !== this.runs) return;
      const kind = e instanceof ModelError || e instanceof HubError ? e.kind : 'internal';
      if (kind === 'cancelled') return;
      const page = new URL('./index.html', import.meta.url);
      page.search = queryFromState({ ...DEFAULTS, model, mode, revision, library, endpoint });
      replaceChildren(this.box, el('p', { class: 'title' }, model || 'memfit'),
        el('p', { class: 'err', role: 'alert' }, el('strong', {}, errorTitle(kind)), e instanceof Error ? e.message : String(e)),
        el('p', { class: 'foot' }, el('a', { href: page.href, target: '_blank', rel: 'noopener noreferrer' }, 'Open in memfit')));
      this.dataset.state = 'error';
    }
  }
}

if (!customElements.get('memfit-estimate')) customElements.define('memfit-estimate', MemfitEstimate);
export { MemfitEstimate };
