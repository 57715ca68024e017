// @ts-check
// The model and its estimate: fetch the model the inputs name (the Hub, or the catalog), compute
// its estimate in the worker, and draw the results — then the open panels for the same model. A
// new input stops whatever the last one still has in flight.

import { engine, isError } from './api.js';
import { replaceChildren } from './dom.js';
import { HubError } from './hub.js';
import { convertBytes, withCommas } from './format.js';
import { gpuById } from './gpus.js';
import { readInputs, shareUrl, updateUrl } from './inputs.js';
import { ModelError, estimateRequest, fromHub } from './model.js';
import { $, clampInt, current, query } from './page.js';
import { showPlan } from './planner.js';
import { renderReport, reportJson, reportMarkdown } from './render.js';
import { countPrompt } from './prompt.js';
import { showRun } from './run-panel.js';
import { requestDtypes } from './state.js';
import { hideError, setStatus, showError } from './status.js';
import { tokenForEndpoint } from './token.js';

const TIMEOUT_MS = clampInt(query.get('timeout'), 200, 120000, 20000);

/** @type {AbortController | null} */
let inflight = null;
/** Models already fetched this visit, by endpoint|id|revision|library|exact|offline. */
const fetched = new Map();
let firstResult = true;

/** Models fetched with another token may differ: fetch them again. */
export function forgetFetched() {
  fetched.clear();
}

/** True while the model's files are being fetched or its estimate computed. */
export function working() {
  return !!inflight || engine().busy;
}

/** A new input stops the fetches in flight and whatever the worker is still computing. */
export function stopAll() {
  inflight?.abort();
  inflight = null;
  if (engine().busy) engine().restart();
}

/** Fetches the model the inputs name and computes its estimate. */
export async function run() {
  current.state = readInputs();
  const { state } = current;
  updateUrl();
  stopAll();
  const mine = ++current.run;
  if (!state.model) {
    setStatus('Type a model id, pick one from the catalog, or drop a config.json.');
    return;
  }
  const controller = new AbortController();
  inflight = controller;
  hideError();
  $('go').disabled = false;
  const key = [state.endpoint, state.model, state.revision, state.library, state.source, state.offline, tokenForEndpoint() ? 't' : ''].join('|');
  try {
    let source = fetched.get(key);
    if (!source) {
      setStatus('Fetching…');
      source = await fromHub(hubRequest(state, state.source === 'exact', controller.signal, mine));
      if (source.origin === 'hub') fetched.set(key, source);
    }
    if (mine !== current.run) return;
    performance.mark('memfit:fetched');
    current.model = source;
    if (source.repo) await showRepo();
    else await compute();
  } catch (e) {
    if (mine !== current.run) return;
    if ((e instanceof ModelError || e instanceof HubError) && e.kind === 'cancelled') { setStatus('Cancelled.'); return; }
    current.model = null;
    current.report = null;
    current.copyable = null;
    $('results').hidden = true;
    showError(e);
  } finally {
    if (inflight === controller) inflight = null;
  }
}

/**
 * What fromHub() is asked for the inputs.
 * @param {any} state @param {boolean} exact @param {AbortSignal} signal @param {number} mine
 */
function hubRequest(state, exact, signal, mine) {
  return {
    input: state.model, revision: state.revision, library: state.library, endpoint: state.endpoint,
    token: tokenForEndpoint(), exact, offline: state.offline, timeoutMs: TIMEOUT_MS, signal,
    repoOptions: repoOptions(state),
    progress: (/** @type {string} */ t) => { if (mine === current.run) setStatus(t); },
  };
}

/**
 * Never a dead end: a model type no family knows (in either module: the worker has already
 * asked memfit-all.wasm) is estimated from its safetensors headers — exact weights, the KV cache
 * and activations from the config's generic keys, marked approximate in the report. Without
 * headers, the error says what was tried.
 * @param {number} mine @param {string} message
 */
async function fromHeaders(mine, message) {
  const controller = new AbortController();
  inflight = controller;
  setStatus('memfit has no family for this model type: reading its safetensors headers instead…');
  try {
    const source = await fromHub(hubRequest(current.state, true, controller.signal, mine));
    if (mine !== current.run) return;
    source.notes = [...source.notes, `${message}: the weights come from the checkpoint's safetensors headers ` +
      '(exact); the KV cache and activations from the config\'s generic keys (approximate)'];
    current.model = source;
    await compute();
  } catch (e) {
    if (mine !== current.run) return;
    if ((e instanceof ModelError || e instanceof HubError) && e.kind === 'cancelled') return;
    const why = e instanceof Error ? e.message : String(e);
    current.model = null;
    $('results').hidden = true;
    showError(new ModelError('unknown_model_type',
      `${message}. Tried: memfit's families (none builds this model type), then the repo's safetensors headers (${why}).`));
  } finally {
    if (inflight === controller) inflight = null;
  }
}

/**
 * What a repo of another kind is answered for: the run panel's GPU and context (0: the kind's
 * default).
 * @param {import('./state.js').State} state
 */
function repoOptions(state) {
  /** @type {{gpu_bytes: number, context?: number}} */
  const o = { gpu_bytes: gpuById(state.rgpu)?.bytes || 0 };
  if (state.context > 0) o.context = state.context;
  return o;
}

/**
 * A repo of another kind (model.repo): its report for the GPU and context on the page — asked
 * again (its files already read) when they changed — drawn generically.
 */
export async function showRepo() {
  const { model, state } = current;
  const repo = model?.repo;
  if (!model || !repo) return;
  const mine = current.run;
  const options = repoOptions(state);
  try {
    if (!repo.report || JSON.stringify(options) !== JSON.stringify(repo.request.options || {})) {
      setStatus('Computing…');
      const { reportWith } = await import('./repo.js');
      repo.report = await reportWith(repo.request, options);
      repo.request.options = options;
    }
    const view = await import('./repo-view.js');
    if (mine !== current.run || !repo.report) return;
    const report = repo.report;
    hideError();
    current.report = null;
    current.copyable = {
      json: () => JSON.stringify(report, null, 2), markdown: () => view.repoMarkdown(report, model.name, shareUrl()),
    };
    const gpu = gpuById(state.rgpu);
    replaceChildren($('report'), view.renderRepoReport(report, {
      name: model.name, sourceNotes: model.notes, answer: gpu ? view.repoAnswer(report, `${gpu.name} (${convertBytes(gpu.bytes)})`) : null,
      options: `For ${gpu?.name} (${withCommas(gpu?.gib ?? 0)} GiB) at ${state.context > 0 ? `${withCommas(state.context)} tokens`
        : 'the default context'} — change them under “Will it run?” below.`,
    }));
    $('results').hidden = false;
    $('copy-status').textContent = '';
    setStatus(`Done: ${model.name} (${repo.kind}).`);
    document.documentElement.dataset.state = 'result';
    showPlan();
    showRun();
  } catch (e) {
    if (mine !== current.run || (e instanceof Error && e.name === 'AbortError')) return;
    current.copyable = null;
    $('results').hidden = true;
    showError(e);
  }
}

/** The estimate of the model on the page, for the inputs' mode, dtypes and class. */
export async function compute() {
  const { model, state } = current;
  if (!model) return;
  if (model.repo) return showRepo();  // mode, dtypes and class are for one model
  const mine = current.run;
  setStatus('Computing…');
  const req = estimateRequest(model, { mode: state.mode, dtypes: requestDtypes(state), cls: state.cls });
  const slow = setTimeout(() => {
    if (mine === current.run) setStatus('Computing… (a model this large takes a while; a new input stops it)');
  }, 1500);
  /** @type {import('./api.js').EstimateReply | import('./api.js').ErrorReply} */
  let reply;
  try {
    reply = await engine().call('estimate', req);
  } catch (e) {
    if (e instanceof Error && e.name === 'AbortError') return;  // a newer input took over
    showError(e);
    return;
  } finally {
    clearTimeout(slow);
  }
  if (mine !== current.run) return;
  if (isError(reply) && reply.error.code === 'unknown_model_type' && model.origin === 'hub' && !model.checkpoint) {
    await fromHeaders(mine, reply.error.message);
    return;
  }
  if (isError(reply)) {
    current.report = null;
    current.copyable = null;
    $('results').hidden = true;
    showError(new ModelError(reply.error.code, reply.error.message));
    return;
  }
  hideError();
  current.report = reply;
  current.copyable = { json: () => reportJson(reply), markdown: () => reportMarkdown(reply, shareUrl()) };
  showReport(reply, model);
  updateUrl();
  showPlan();
  showRun();
  countPrompt();  // the prompt's tokens with the new model's tokenizer
}

/**
 * The results card, and the page's timing (scripts/bench-web.sh reads the first result's).
 * @param {import('./api.js').EstimateReply} reply @param {import('./model.js').ModelSource} model
 */
function showReport(reply, model) {
  const ms = engine().lastMs.estimate;
  replaceChildren($('report'), renderReport(reply, {
    info: model.info, exact: model.exact, sourceNotes: model.notes,
  }));
  $('results').hidden = false;
  $('copy-status').textContent = '';
  setStatus(`Done: ${reply.name}.`);
  document.documentElement.dataset.state = 'result';
  if (firstResult) {
    firstResult = false;
    const t = Math.round(performance.now());
    document.documentElement.dataset.firstResultMs = String(t);
    // where the first result's time went
    const fetchedAt = performance.getEntriesByName('memfit:fetched').pop()?.startTime;
    document.documentElement.dataset.timeline = JSON.stringify({
      app_start: Math.round(performance.getEntriesByName('memfit:app').pop()?.startTime ?? 0),
      model_fetched: fetchedAt === undefined ? null : Math.round(fetchedAt),
      ...Object.fromEntries(Object.entries(engine().steps).map(([k, v]) => [k, Math.round(v)])),
      estimate_ms: ms, result: t,
    });
    $('timing').textContent = `First result ${t} ms after the page started loading; this estimate took ${ms?.toFixed(2)} ms in WebAssembly.`;
  } else {
    $('timing').textContent = `This estimate took ${ms?.toFixed(2)} ms in WebAssembly.`;
  }
  document.documentElement.dataset.estimateMs = String(ms);
}
