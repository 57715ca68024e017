// @ts-check
// The access token and the Hub endpoint: a token belongs to one endpoint's origin, is kept in
// this tab's memory (in localStorage only when the visitor asks), and is never carried to
// another endpoint.

import { $, current, query } from './page.js';
import { readInputs } from './inputs.js';
import { DEFAULT_ENDPOINT } from './state.js';

let token = '';
let tokenOrigin = '';

/** @param {string} endpoint */
function originOf(endpoint) {
  try { return new URL(endpoint).origin; } catch { return ''; }
}

/** @param {string} origin */
function storedToken(origin) {
  try { return localStorage.getItem(`memfit.token:${origin}`) || ''; } catch { return ''; }
}

/** The remembered token of the state's endpoint, and the note when it is not the Hub's. */
export function setupToken() {
  const { state } = current;
  const origin = originOf(state.endpoint);
  const saved = storedToken(origin);
  token = saved;
  tokenOrigin = origin;
  $('token').value = saved;
  $('remember').checked = !!saved;
  const note = $('endpoint-note');
  if (state.endpoint !== DEFAULT_ENDPOINT) {
    note.hidden = false;
    note.textContent = `Using the Hub endpoint ${state.endpoint}${query.has('endpoint') ? ' (from the link)' : ''}.`;
    $('settings').open = true;
  } else {
    note.hidden = true;
  }
}

/** The token, if it was given for the endpoint in use (never another origin's). */
export function tokenForEndpoint() {
  return token && tokenOrigin === originOf(current.state.endpoint) ? token : '';
}

export function onTokenInput() {
  token = $('token').value.trim();
  tokenOrigin = originOf(current.state.endpoint);
  if ($('remember').checked) saveToken();
}

export function saveToken() {
  const key = `memfit.token:${originOf(current.state.endpoint)}`;
  try {
    if ($('remember').checked && token) localStorage.setItem(key, token);
    else localStorage.removeItem(key);
  } catch { /* storage disabled: memory only */ }
}

/** A new endpoint: the state follows, and the token is the new origin's own (if remembered). */
export function onEndpointChange() {
  const before = originOf(current.state.endpoint);
  current.state = readInputs();
  const after = originOf(current.state.endpoint);
  if (before !== after) {
    // a token is for one endpoint: never carry it to another
    token = storedToken(after);
    tokenOrigin = after;
    $('token').value = token;
    $('remember').checked = !!token;
  }
  const note = $('endpoint-note');
  note.hidden = current.state.endpoint === DEFAULT_ENDPOINT;
  note.textContent = `Using the Hub endpoint ${current.state.endpoint}.`;
}
