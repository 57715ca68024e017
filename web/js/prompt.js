// @ts-check
// The "will it run?" panel's prompt box: the prompt's tokens, counted with the model's own
// tokenizer.json as `tokenizers` would (ids from core's tokenizer in memfit-text.wasm, loaded by
// the worker only now). The file is fetched from the Hub, once per model, only when a prompt is
// typed; the count can be taken as the context of the estimate.
// The output's data-state says where a count stands: busy, done (data-count holds N), error,
// unavailable, or empty.

import { engine, isError } from './api.js';
import { HubClient } from './hub.js';
import { withCommas } from './format.js';
import { $, current, fromHubOrCatalog } from './page.js';
import { showRun } from './run-panel.js';
import { tokenForEndpoint } from './token.js';

/** tokenizer.json texts already fetched, by endpoint|repo|revision|token. @type {Map<string, Promise<string>>} */
const tokenizers = new Map();
/** The latest count asked for: an older one's answer is dropped. */
let latest = 0;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let timer;

/** The model's tokenizer.json (a failed fetch is not kept). @param {string} repo */
function tokenizerJson(repo) {
  const s = current.state;
  const token = tokenForEndpoint();
  const key = [s.endpoint, repo, s.revision || 'main', token ? 't' : ''].join('|');
  let text = tokenizers.get(key);
  if (!text) {
    const hub = new HubClient({ endpoint: s.endpoint, token, revision: s.revision || 'main' });
    text = hub.file(repo, 'tokenizer.json');
    text.catch(() => tokenizers.delete(key));
    tokenizers.set(key, text);
  }
  return text;
}

/** @param {string} state @param {string} text @param {number} [count] */
function show(state, text, count) {
  const out = $('run-prompt-tokens');
  out.dataset.state = state;
  out.value = text;
  if (count === undefined) delete out.dataset.count;
  else out.dataset.count = String(count);
  $('run-prompt-context').hidden = count === undefined;
}

/** A core error as the page says it: an unsupported pre-tokenizer regex by its name. @param {{code: string, message: string}} e */
function explain(e) {
  return /regex/.test(e.message) ? `this tokenizer's regex is not supported: ${e.message}` : `cannot count tokens: ${e.message}`;
}

async function count() {
  const run = ++latest;
  const prompt = $('run-prompt').value;
  if (!prompt) return show('empty', '');
  if (!current.model || !fromHubOrCatalog()) {
    return show('unavailable', 'Token counts need a model from the Hub (its tokenizer.json).');
  }
  if (current.state.offline) return show('unavailable', 'Token counts need the Hub (offline mode is on).');
  show('busy', 'counting…');
  try {
    const json = await tokenizerJson(current.model.name);
    if (run !== latest) return;
    const reply = await engine().call('tokenize', json, prompt);
    if (run !== latest) return;
    if (isError(reply)) show('error', explain(reply.error));
    else show('done', `${withCommas(reply.count)} tokens`, reply.count);
  } catch (e) {
    if (run === latest) show('error', `cannot count tokens: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Counts the prompt again (a new model, or new text: counted once typing pauses). */
export function countPrompt() {
  clearTimeout(timer);
  // busy at once: a count shown is never one of an older text
  if ($('run-prompt').value) show('busy', 'counting…');
  timer = setTimeout(() => { count().catch(() => {}); }, 150);
}

export function setupPrompt() {
  $('run-prompt').addEventListener('input', countPrompt);
  // The count as the estimate's context: the slider's label shows it until the slider moves.
  $('run-prompt-context').addEventListener('click', () => {
    const n = Number($('run-prompt-tokens').dataset.count);
    if (!(n > 0)) return;
    current.state.context = n;
    $('run-context-out').value = withCommas(n);
    showRun();
  });
}
