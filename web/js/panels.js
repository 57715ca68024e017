// @ts-check
// What the device-map planner (planner.js) and "will it run?" (run-panel.js) panels share: the
// model fields of their requests, a polite line for an error reply, and redrawing on input.

import { el } from './dom.js';
import { readInputs, updateUrl } from './inputs.js';
import { estimateRequest } from './model.js';
import { $, current } from './page.js';
import { showError } from './status.js';

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

/** What a panel shows before there is a model. */
export const noModelYet = () => el('p', { class: 'help' }, 'Estimate a model first.');

/** The model fields of a panel's request (the page's mode and class), or null without a model. */
export function modelFields() {
  const { model, state } = current;
  if (!model) return null;
  return estimateRequest(model, { mode: state.mode, dtypes: null, cls: state.cls });
}

/** @param {unknown} e */
export function panelError(e) {
  if (!(e instanceof Error && e.name === 'AbortError')) showError(e);
}

/** Runs fn at most once per `ms` of quiet. @param {() => void} fn @param {number} ms */
export function debounce(fn, ms) {
  /** @type {any} */
  let t = null;
  return () => { clearTimeout(t); t = setTimeout(fn, ms); };
}

/**
 * Redraws a panel (after a short quiet) when one of its inputs changes, the state and the URL
 * following them.
 * @param {string[]} ids @param {() => Promise<void>} refresh
 */
export function redrawOnInput(ids, refresh) {
  const later = debounce(() => { current.state = readInputs(); updateUrl(); refresh().catch(panelError); }, 120);
  for (const id of ids) {
    $(id).addEventListener('input', later);
    $(id).addEventListener('change', later);
  }
}
