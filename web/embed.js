// @ts-check
// <memfit-estimate model="org/name" dtypes="float16,int4"></memfit-estimate> — memfit on any
// page: one <script type="module" src=".../embed.js">, then the element. Shadow DOM keeps its
// styles in and the page's out (`all: initial`); the WASM loads once per page, when the first
// element scrolls into view, in one worker every element shares. Attributes: model (required),
// dtypes, mode (memfit | accelerate), revision, library, endpoint (default the Hugging Face
// Hub). Public models only: the widget never holds a token.

import { engine, isError } from './js/api.js';
import { el, replaceChildren } from './js/dom.js';
import { withCommas } from './js/format.js';
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

class MemfitEstimate extends HTMLElement {
  static get observedAttributes() { return ['model', 'dtypes', 'mode', 'revision', 'library', 'endpoint']; }

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
    try {
      if (!model) throw new ModelError('input', 'the element needs a model attribute (org/name)');
      const source = await fromHub({ input: model, revision, library, endpoint, signal: controller.signal, timeoutMs: 20000 });
      const reply = await engine().call('estimate', estimateRequest(source, { mode, dtypes: dtypes.length ? dtypes : null }));
      if (mine !== this.runs) return;
      if (isError(reply)) throw new ModelError(reply.error.code, reply.error.message);
      const page = new URL('./index.html', import.meta.url);
      page.search = queryFromState({ ...DEFAULTS, model, mode, revision, library, dtypes: dtypes.length ? dtypes : null, endpoint });
      replaceChildren(this.box,
        el('p', { class: 'title' }, reply.name),
        el('p', { class: 'facts' }, `${reply.model_class} · ${withCommas(reply.parameters)} parameters`),
        el('table', {},
          el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'dtype'), el('th', { scope: 'col' }, 'Largest layer'),
            el('th', { scope: 'col' }, 'Total'), el('th', { scope: 'col' }, 'Training (Adam)'))),
          el('tbody', {}, reply.rows.map((r) => el('tr', { 'data-dtype': r.dtype },
            el('th', { scope: 'row' }, r.dtype), el('td', { class: 'num' }, r.largest_layer),
            el('td', { class: 'num' }, r.total), el('td', { class: 'num' }, r.training))))),
        el('p', { class: 'foot' }, source.origin === 'catalog' ? 'From memfit’s bundled catalog · ' : '',
          el('a', { href: page.href, target: '_blank', rel: 'noopener noreferrer' }, 'Details in memfit')));
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
