// @ts-check
// What the page's modules share: its elements by id, the link's query, and the current values —
// the state the inputs describe, the model on the page, its report, and the number of the
// latest run (a reply for an older run is dropped when it comes).

import { stateFromQuery } from './state.js';

/** @typedef {import('./state.js').State} State */
/** @typedef {import('./model.js').ModelSource} ModelSource */
/** @typedef {import('./api.js').EstimateReply} EstimateReply */

/** The page's element with this id. @param {string} id @returns {any} */
export const $ = (id) => document.getElementById(id);

export const query = new URLSearchParams(location.search);

export const current = {
  /** @type {State} */
  state: stateFromQuery(query),
  /** @type {ModelSource | null} */
  model: null,
  /** @type {EstimateReply | null} */
  report: null,
  /** What "Copy as JSON / Markdown" copy: the estimate's, or a repo report's (made when asked). */
  /** @type {{json: () => string, markdown: () => string} | null} */
  copyable: null,
  /** Counts runs (a new input, a recompute): each waits for answers to its own number only. */
  run: 0,
};

/** The model came from the Hub or the catalog (not the visitor's files): it can be fetched again. */
export function fromHubOrCatalog() {
  return !!current.model && current.model.origin !== 'local';
}

/** @param {any} v @param {number} lo @param {number} hi @param {number} def */
export function clampInt(v, lo, hi, def) {
  const n = Number(v);
  return v !== null && v !== '' && Number.isFinite(n) ? Math.min(hi, Math.max(lo, Math.round(n))) : def;
}
