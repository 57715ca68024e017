// @ts-check
// The bundled catalog (../catalog.json): popular models' hyperparameters in memfit's compact
// form — config.json less what no estimate reads (ids of tokens, label maps, generation
// defaults, provenance) — so the page works with no network at all. web/tools/make-catalog.mjs
// writes it; tests/web/catalog.test.mjs checks that every entry estimates exactly like the full
// config.json it came from.

/**
 * @typedef {object} CatalogEntry
 * @property {string} id
 * @property {'transformers' | 'timm'} library
 * @property {object | null} config    null: a timm model built from its name
 * @property {number} [parameters]     for the list
 */

/** @type {Promise<Map<string, CatalogEntry>> | null} */
let loading = null;

/** The catalog, fetched once (same origin as this module). @returns {Promise<Map<string, CatalogEntry>>} */
export function catalog() {
  if (!loading) {
    const url = new URL('../catalog.json', import.meta.url);
    loading = fetch(url, { credentials: 'omit' })
      .then((r) => (r.ok ? r.json() : { models: [] }))
      .then((j) => fromJson(j))
      .catch(() => new Map());
  }
  return loading;
}

/** @param {any} j @returns {Map<string, CatalogEntry>} */
export function fromJson(j) {
  const out = new Map();
  for (const m of (j && Array.isArray(j.models) ? j.models : [])) {
    if (m && typeof m.id === 'string' && (m.library === 'transformers' || m.library === 'timm')) {
      out.set(m.id.toLowerCase(), { id: m.id, library: m.library, config: m.config ? expand(m.config) : null, parameters: m.parameters });
    }
  }
  return out;
}

/**
 * The compact form back to a config.json object: "id2label": N → {"0": "LABEL_0", …} (what
 * transformers itself writes for N unnamed labels; only their number sizes anything).
 * @param {any} v @returns {any}
 */
export function expand(v) {
  if (Array.isArray(v)) return v.map(expand);
  if (!v || typeof v !== 'object') return v;
  /** @type {any} */
  const out = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === 'id2label' && typeof x === 'number') {
      out[k] = Object.fromEntries(Array.from({ length: x }, (_, i) => [String(i), `LABEL_${i}`]));
    } else {
      out[k] = expand(x);
    }
  }
  return out;
}
