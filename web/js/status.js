// @ts-check
// The status line and the error box: what the page is doing, and a failure explained (a title
// for its kind, the message, a hint of what to do).

import { el, replaceChildren } from './dom.js';
import { HubError } from './hub.js';
import { ModelError, errorTitle } from './model.js';
import { $, current } from './page.js';
import { parseModelInput } from './state.js';

/** @param {string} text */
export function setStatus(text) {
  $('status').textContent = text;
}

const HINTS = /** @type {Object<string, string>} */ ({
  gated: 'Accept the conditions on the model page, then paste a token with access under “Access token” above.',
  repo_not_found: 'Check the spelling (org/name). Private models need a token.',
  network: 'Models in the catalog below still work offline.',
  timeout: 'The Hub may be slow: try again, or use the catalog.',
  unknown_model_type: 'memfit builds each supported architecture exactly; this one is not among them yet.',
  no_library: 'Choose transformers or timm under Library and estimate again.',
});

/** @param {unknown} e */
export function showError(e) {
  const box = $('error');
  const { state } = current;
  let kind = 'internal', message = String(e);
  if (e instanceof ModelError || e instanceof HubError) { kind = e.kind; message = e.message; }
  else if (e instanceof Error) message = e.message;
  const parsed = parseModelInput(state.model);
  const modelPage = kind === 'gated' && parsed && /^https?:/.test(state.endpoint) ? `${state.endpoint}/${parsed.id}` : '';
  replaceChildren(box, el('h2', {}, errorTitle(kind)), el('p', { class: 'message' }, message),
    HINTS[kind] ? el('p', { class: 'hint' }, HINTS[kind],
      modelPage ? [' ', el('a', { href: modelPage, target: '_blank', rel: 'noopener noreferrer' }, 'Open the model page')] : null) : null);
  if (kind === 'gated') $('settings').open = true;
  box.dataset.kind = kind;
  box.hidden = false;
  setStatus('');
}

export function hideError() {
  $('error').hidden = true;
  $('error').dataset.kind = '';
}
