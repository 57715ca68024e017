// @ts-check
// The page: inputs ⇄ state ⇄ URL, the model (Hub, catalog or dropped files), the estimate in the
// worker, and the results and panels. Everything untrusted is shown as text (dom.js).

import { engine, isError } from './api.js';
import { catalog } from './catalog.js';
import { el, replaceChildren } from './dom.js';
import { assemble, classifyJson, readFile } from './files.js';
import { HubError } from './hub.js';
import { ModelError, errorTitle, estimateRequest, fromHub, parseHeader } from './model.js';
import { debounce, fillGpuSelect, inferenceRequest, planRequest, renderPlan, renderRun, unavailable } from './panels.js';
import { renderReport, reportJson, reportMarkdown } from './render.js';
import { DEFAULT_ENDPOINT, MODE_DTYPES, isRepoId, parseModelInput, queryFromState, requestDtypes, stateFromQuery } from './state.js';
import { withCommas } from './format.js';

/** @typedef {import('./state.js').State} State */
/** @typedef {import('./model.js').ModelSource} ModelSource */

performance.mark('memfit:app');
const $ = (/** @type {string} */ id) => /** @type {any} */ (document.getElementById(id));
const query = new URLSearchParams(location.search);
const TIMEOUT_MS = clampInt(query.get('timeout'), 200, 120000, 20000);

/** @type {State} */
let state = stateFromQuery(query);
/** @type {ModelSource | null} */
let model = null;
/** @type {import('./api.js').EstimateReply | null} */
let report = null;
/** The planner panel's last reply (`memfit plan --json`). @type {import('./api.js').PlanReply | null} */
let plan = null;
/** @type {AbortController | null} */
let inflight = null;
let runNumber = 0;
/** Models already fetched this visit, by endpoint|id|revision|library|exact|offline. */
const fetched = new Map();
let token = '';
let tokenOrigin = '';
let firstResult = true;

// ---------------------------------------------------------------- state ⇄ inputs

function writeInputs() {
  $('model').value = state.model;
  $('revision').value = state.revision;
  $('library').value = state.library;
  for (const r of document.querySelectorAll('input[name=mode]')) /** @type {HTMLInputElement} */ (r).checked = r.getAttribute('value') === state.mode;
  $('source').value = state.source;
  $('source').disabled = state.mode === 'accelerate';
  writeDtypes();
  $('class').value = state.cls;
  $('endpoint').value = state.endpoint === DEFAULT_ENDPOINT ? '' : state.endpoint;
  $('offline').checked = state.offline;
  fillGpuSelect($('plan-gpu'), state.gpu);
  $('plan-gpus').value = state.gpus;
  $('plan-cpu').value = state.cpu;
  $('plan-disk').checked = state.disk;
  $('plan-strategy').value = state.strategy;
  $('plan-dtype').value = state.pdtype;
  fillGpuSelect($('run-gpu'), state.rgpu);
  $('run-context').value = String(state.context ? Math.min(20, Math.max(7, Math.round(Math.log2(state.context)))) : 12);
  $('run-context-out').value = state.context ? withCommas(state.context) : 'the model’s default (≤ 4,096)';
  $('run-batch').value = String(Math.min(64, state.batch));
  $('run-batch-out').value = String(state.batch);
  $('run-dtype').value = state.rdtype;
  $('run-kv').value = state.kv;
  $('run-engine').value = state.engine;
  $('run-train').value = state.train;
  $('run-rank').value = state.rank;
  $('run-targets').value = state.targets;
  $('run-optimizer').value = state.optimizer;
  $('run-gc').checked = state.gc;
  showTrainingFields();
}

function writeDtypes() {
  const list = state.dtypes || MODE_DTYPES[state.mode];
  for (const box of document.querySelectorAll('input[name=dtype]')) {
    const b = /** @type {HTMLInputElement} */ (box);
    b.checked = list.includes(b.value);
    b.disabled = state.mode === 'accelerate' && b.value === 'bfloat16';
  }
}

/** @returns {State} */
function readInputs() {
  const mode = /** @type {any} */ (document.querySelector('input[name=mode]:checked'))?.value || 'memfit';
  const dtypes = [...document.querySelectorAll('input[name=dtype]:checked:not(:disabled)')].map((b) => /** @type {HTMLInputElement} */ (b).value);
  const endpoint = ($('endpoint').value || '').trim().replace(/\/+$/, '') || DEFAULT_ENDPOINT;
  const s = {
    ...state,
    model: $('model').value.trim(),
    revision: $('revision').value.trim() || 'main',
    library: $('library').value,
    mode,
    source: mode === 'accelerate' ? 'config' : $('source').value,
    dtypes: dtypes.length ? dtypes : null,
    cls: $('class').value.trim(),
    endpoint,
    offline: $('offline').checked,
    gpu: $('plan-gpu').value,
    gpus: clampInt($('plan-gpus').value, 0, 64, 1),
    cpu: clampInt($('plan-cpu').value, 0, 1 << 20, 64),
    disk: $('plan-disk').checked,
    strategy: $('plan-strategy').value,
    pdtype: $('plan-dtype').value,
    rgpu: $('run-gpu').value,
    batch: clampInt($('run-batch').value, 1, 4096, 1),
    rdtype: $('run-dtype').value,
    kv: $('run-kv').value,
    engine: $('run-engine').value,
    train: $('run-train').value,
    rank: clampInt($('run-rank').value, 1, 4096, 8),
    targets: $('run-targets').value.trim(),
    optimizer: $('run-optimizer').value,
    gc: $('run-gc').checked,
  };
  // the dtypes of the mode's default list are written as "default" (no parameter)
  const defaults = MODE_DTYPES[/** @type {'memfit' | 'accelerate'} */ (mode)];
  if (s.dtypes && s.dtypes.length === defaults.length && defaults.every((d, i) => s.dtypes?.[i] === d)) s.dtypes = null;
  return /** @type {State} */ (s);
}

/** @param {any} v @param {number} lo @param {number} hi @param {number} def */
function clampInt(v, lo, hi, def) {
  const n = Number(v);
  return v !== null && v !== '' && Number.isFinite(n) ? Math.min(hi, Math.max(lo, Math.round(n))) : def;
}

function shareUrl() {
  const q = queryFromState(model && model.origin === 'local' ? { ...state, model: '' } : state);
  return `${location.origin}${location.pathname}${q ? `?${q}` : ''}`;
}

function updateUrl() {
  history.replaceState(null, '', shareUrl());
}

// ---------------------------------------------------------------- token and endpoint

/** @param {string} endpoint */
function originOf(endpoint) {
  try { return new URL(endpoint).origin; } catch { return ''; }
}

function storedToken(/** @type {string} */ origin) {
  try { return localStorage.getItem(`memfit.token:${origin}`) || ''; } catch { return ''; }
}

function setupToken() {
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
function tokenForEndpoint() {
  return token && tokenOrigin === originOf(state.endpoint) ? token : '';
}

function onTokenInput() {
  token = $('token').value.trim();
  tokenOrigin = originOf(state.endpoint);
  if ($('remember').checked) saveToken();
}

function saveToken() {
  const key = `memfit.token:${originOf(state.endpoint)}`;
  try {
    if ($('remember').checked && token) localStorage.setItem(key, token);
    else localStorage.removeItem(key);
  } catch { /* storage disabled: memory only */ }
}

function onEndpointChange() {
  const before = originOf(state.endpoint);
  state = readInputs();
  const after = originOf(state.endpoint);
  if (before !== after) {
    // a token is for one endpoint: never carry it to another
    token = storedToken(after);
    tokenOrigin = after;
    $('token').value = token;
    $('remember').checked = !!token;
  }
  const note = $('endpoint-note');
  note.hidden = state.endpoint === DEFAULT_ENDPOINT;
  note.textContent = `Using the Hub endpoint ${state.endpoint}.`;
  if (model && model.origin !== 'local') run();
}

// ---------------------------------------------------------------- status, errors

/** @param {string} text */
function setStatus(text) {
  $('status').textContent = text;
}

/** @param {unknown} e */
function showError(e) {
  const box = $('error');
  let kind = 'internal', message = String(e);
  if (e instanceof ModelError || e instanceof HubError) { kind = e.kind; message = e.message; }
  else if (e instanceof Error) message = e.message;
  const hints = /** @type {Object<string, string>} */ ({
    gated: 'Accept the conditions on the model page, then paste a token with access under “Access token” above.',
    repo_not_found: 'Check the spelling (org/name). Private models need a token.',
    network: 'Models in the catalog below still work offline.',
    timeout: 'The Hub may be slow: try again, or use the catalog.',
    unknown_model_type: 'memfit builds each supported architecture exactly; this one is not among them yet.',
    no_library: 'Choose transformers or timm under Library and estimate again.',
  });
  const parsed = parseModelInput(state.model);
  const modelPage = kind === 'gated' && parsed && /^https?:/.test(state.endpoint) ? `${state.endpoint}/${parsed.id}` : '';
  replaceChildren(box, el('h2', {}, errorTitle(kind)), el('p', { class: 'message' }, message),
    hints[kind] ? el('p', { class: 'hint' }, hints[kind],
      modelPage ? [' ', el('a', { href: modelPage, target: '_blank', rel: 'noopener noreferrer' }, 'Open the model page')] : null) : null);
  if (kind === 'gated') $('settings').open = true;
  box.dataset.kind = kind;
  box.hidden = false;
  setStatus('');
}

function hideError() {
  $('error').hidden = true;
  $('error').dataset.kind = '';
}

// ---------------------------------------------------------------- the model and the estimate

/** A new input stops the fetches in flight and whatever the worker is still computing. */
function stopAll() {
  inflight?.abort();
  inflight = null;
  if (engine().busy) engine().restart();
}

async function run() {
  state = readInputs();
  updateUrl();
  stopAll();
  const mine = ++runNumber;
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
      source = await fromHub({
        input: state.model, revision: state.revision, library: state.library, endpoint: state.endpoint,
        token: tokenForEndpoint(), exact: state.source === 'exact', offline: state.offline,
        timeoutMs: TIMEOUT_MS, signal: controller.signal, progress: (t) => { if (mine === runNumber) setStatus(t); },
      });
      if (source.origin === 'hub') fetched.set(key, source);
    }
    if (mine !== runNumber) return;
    performance.mark('memfit:fetched');
    model = source;
    await compute();
  } catch (e) {
    if (mine !== runNumber) return;
    if ((e instanceof ModelError || e instanceof HubError) && e.kind === 'cancelled') { setStatus('Cancelled.'); return; }
    model = null;
    report = null;
    $('results').hidden = true;
    showError(e);
  } finally {
    if (inflight === controller) inflight = null;
  }
}

async function compute() {
  if (!model) return;
  const mine = runNumber;
  setStatus('Computing…');
  const req = estimateRequest(model, { mode: state.mode, dtypes: requestDtypes(state), cls: state.cls });
  const slow = setTimeout(() => {
    if (mine === runNumber) setStatus('Computing… (a model this large takes a while; a new input stops it)');
  }, 1500);
  let reply;
  try {
    reply = await engine().estimate(req);
  } catch (e) {
    if (e instanceof Error && e.name === 'AbortError') return;  // a newer input took over
    showError(e);
    return;
  } finally {
    clearTimeout(slow);
  }
  if (mine !== runNumber) return;
  if (isError(reply)) {
    report = null;
    $('results').hidden = true;
    showError(new ModelError(reply.error.code, reply.error.message));
    return;
  }
  hideError();
  report = reply;
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
    // where the first result's time went (scripts/bench-web.sh reads these)
    const fetchedAt = performance.getEntriesByName('memfit:fetched').pop()?.startTime;
    document.documentElement.dataset.timeline = JSON.stringify({
      app_start: Math.round(performance.getEntriesByName('memfit:app').pop()?.startTime ?? 0),
      model_fetched: fetchedAt === undefined ? null : Math.round(fetchedAt),
      wasm_ready: engine().readyAt === undefined ? null : Math.round(engine().readyAt),
      estimate_ms: ms, result: t,
    });
    $('timing').textContent = `First result ${t} ms after the page started loading; this estimate took ${ms?.toFixed(2)} ms in WebAssembly.`;
  } else {
    $('timing').textContent = `This estimate took ${ms?.toFixed(2)} ms in WebAssembly.`;
  }
  document.documentElement.dataset.estimateMs = String(ms);
  updateUrl();
  refreshPanels();
}

// ---------------------------------------------------------------- local files

/** @param {File[]} files */
async function useFiles(files) {
  if (!files.length) return;
  stopAll();
  const mine = ++runNumber;
  hideError();
  setStatus(`Reading ${files.length} file${files.length === 1 ? '' : 's'}…`);
  try {
    const read = await Promise.all(files.map((f) => readFile(f)));
    await useLocal(read, mine);
  } catch (e) {
    if (mine === runNumber) showError(e instanceof ModelError || e instanceof HubError ? e : new ModelError('file', e instanceof Error ? e.message : String(e)));
  }
}

/** @param {import('./files.js').LocalFile[]} read @param {number} mine */
async function useLocal(read, mine) {
  const drop = assemble(read);
  if (!drop.config && !drop.shards.length) {
    const idx = drop.index;
    setStatus(idx ? `The index lists ${Object.keys(idx.weightMap).length} tensors in ${idx.shards.length} shard(s)` +
      `${idx.totalSize !== null ? ` (${withCommas(idx.totalSize)} bytes)` : ''}. Drop its shard files too (only their headers are read), or a config.json.` : 'Nothing to estimate.');
    return;
  }
  /** @type {any[] | null} */
  let checkpoint = null;
  let bytesRead = 0;
  if (drop.shards.length) {
    checkpoint = [];
    for (const s of drop.shards) {
      const tensors = await parseHeader(s.bytes, s.size, s.name);
      bytesRead += s.bytes.length;
      checkpoint.push(...tensors.map((/** @type {any} */ t) => ({ name: t.name, dtype: t.dtype, shape: t.shape, file: s.name })));
    }
  }
  if (mine !== runNumber) return;
  state = readInputs();
  const typed = state.model;
  const cfgName = drop.config && typeof drop.config._name_or_path === 'string' ? drop.config._name_or_path : '';
  const name = isRepoId(typed) ? typed : isRepoId(cfgName) ? cfgName : (read.find((f) => f.kind === 'config')?.name || drop.shards[0]?.name || 'config.json');
  model = {
    name, library: state.library === 'auto' ? '' : state.library, config: drop.config, checkpoint,
    origin: 'local', notes: ['From your files (nothing was uploaded).', ...drop.warnings],
    exact: checkpoint ? { files: drop.shards.length, bytesRead, indexTotal: drop.index ? drop.index.totalSize : null } : null,
  };
  if (checkpoint && state.mode === 'accelerate') model.notes.push('The safetensors headers are used in memfit mode only (accelerate builds from the config).');
  await compute();
}

function setupDrop() {
  const zone = $('drop');
  zone.addEventListener('dragover', (/** @type {DragEvent} */ e) => { e.preventDefault(); zone.classList.add('over'); });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (/** @type {DragEvent} */ e) => {
    e.preventDefault();
    zone.classList.remove('over');
    useFiles([...(e.dataTransfer?.files || [])]);
  });
  // a file dropped anywhere else on the page must not navigate away from it
  window.addEventListener('dragover', (e) => e.preventDefault());
  window.addEventListener('drop', (e) => { if (!zone.contains(/** @type {Node} */ (e.target))) e.preventDefault(); });
  $('files').addEventListener('change', () => useFiles([...$('files').files]));
  $('paste-go').addEventListener('click', () => usePastedText($('paste').value));
  document.addEventListener('paste', (e) => {
    const t = /** @type {HTMLElement} */ (e.target);
    if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA')) return;
    const files = [...(e.clipboardData?.files || [])];
    if (files.length) { e.preventDefault(); useFiles(files); return; }
    const text = e.clipboardData?.getData('text/plain') || '';
    if (text.trim().startsWith('{')) { e.preventDefault(); usePastedText(text); }
  });
}

/** @param {string} text */
async function usePastedText(text) {
  stopAll();
  const mine = ++runNumber;
  hideError();
  try {
    await useLocal([classifyJson(text, 'pasted text')], mine);
  } catch (e) {
    showError(e instanceof ModelError || e instanceof HubError ? e : new ModelError('invalid_json', e instanceof Error ? e.message : String(e)));
  }
}

// ---------------------------------------------------------------- copy

/** @param {string} text @param {string} what @param {string} [statusId] where to say it was copied */
async function copy(text, what, statusId = 'copy-status') {
  const status = $(statusId);
  try {
    await navigator.clipboard.writeText(text);
    status.textContent = `${what} copied.`;
  } catch {
    const area = el('textarea', { class: 'visually-hidden', 'aria-hidden': 'true' }, text);
    document.body.append(area);
    /** @type {HTMLTextAreaElement} */ (area).select();
    const ok = document.execCommand('copy');
    area.remove();
    status.textContent = ok ? `${what} copied.` : `Could not copy: select the text and copy it by hand.`;
  }
  status.dataset.copied = text;
}

// ---------------------------------------------------------------- panels

function modelFields() {
  if (!model) return null;
  return estimateRequest(model, { mode: state.mode, dtypes: null, cls: state.cls });
}

async function refreshPlanner() {
  const out = $('plan-out');
  if (!$('planner').open) return;
  const fields = modelFields();
  if (!fields || !report) {
    plan = null;
    $('copy-plan').disabled = true;
    replaceChildren(out, el('p', { class: 'help' }, 'Estimate a model first.'));
    return;
  }
  const reply = await engine().plan(planRequest(fields, state));
  plan = isError(reply) ? null : reply;
  $('copy-plan').disabled = !plan;
  if (isError(reply)) replaceChildren(out, unavailable(reply.error, 'The planner'));
  else replaceChildren(out, ...renderPlan(reply));
}

async function refreshRun() {
  const out = $('run-out');
  if (!$('run').open) return;
  const fields = modelFields();
  if (!fields || !report) { replaceChildren(out, el('p', { class: 'help' }, 'Estimate a model first.')); return; }
  const reply = await engine().inference(inferenceRequest(fields, state));
  if (isError(reply)) replaceChildren(out, unavailable(reply.error, 'Inference and training estimates'));
  else replaceChildren(out, ...renderRun(reply));
}

/** @param {unknown} e */
function panelError(e) {
  if (!(e instanceof Error && e.name === 'AbortError')) showError(e);
}

function refreshPanels() {
  refreshPlanner().catch(panelError);
  refreshRun().catch(panelError);
}

function showTrainingFields() {
  const train = $('run-train').value;
  for (const f of document.querySelectorAll('.train-only')) {
    const lora = f.querySelector('#run-rank, #run-targets');
    /** @type {HTMLElement} */ (f).hidden = train === 'none' || (!!lora && train === 'full');
  }
}

function setupPanels() {
  const planLater = debounce(() => { state = readInputs(); updateUrl(); refreshPlanner().catch(panelError); }, 120);
  const runLater = debounce(() => { state = readInputs(); updateUrl(); refreshRun().catch(panelError); }, 120);
  for (const id of ['plan-gpu', 'plan-gpus', 'plan-cpu', 'plan-disk', 'plan-strategy', 'plan-dtype']) {
    $(id).addEventListener('input', planLater);
    $(id).addEventListener('change', planLater);
  }
  for (const id of ['run-gpu', 'run-context', 'run-batch', 'run-dtype', 'run-kv', 'run-engine', 'run-train', 'run-rank', 'run-targets', 'run-optimizer', 'run-gc']) {
    $(id).addEventListener('input', runLater);
    $(id).addEventListener('change', runLater);
  }
  // the slider moves in powers of two; until it moves, the model's default context is used
  $('run-context').addEventListener('input', () => {
    state.context = 2 ** Number($('run-context').value);
    $('run-context-out').value = withCommas(state.context);
  });
  $('run-batch').addEventListener('input', () => { $('run-batch-out').value = $('run-batch').value; });
  $('run-train').addEventListener('change', showTrainingFields);
  $('planner').addEventListener('toggle', () => refreshPlanner().catch(panelError));
  $('run').addEventListener('toggle', () => refreshRun().catch(panelError));
}

// ---------------------------------------------------------------- catalog

async function setupCatalog() {
  const entries = [...(await catalog()).values()].sort((a, b) => a.id.localeCompare(b.id));
  replaceChildren($('catalog-ids'), entries.map((e) => el('option', { value: e.id })));
  replaceChildren($('catalog-list'), entries.map((e) => el('li', {},
    el('button', { type: 'button', class: 'link', 'data-model': e.id, onclick: () => { $('model').value = e.id; run(); } }, e.id))));
}

// ---------------------------------------------------------------- start

function start() {
  writeInputs();
  setupToken();
  setupDrop();
  setupPanels();
  setupCatalog();
  $('model-form').addEventListener('submit', (/** @type {Event} */ e) => { e.preventDefault(); run(); });
  // a new input cancels what is being fetched for the old one
  $('model').addEventListener('input', () => {
    if (inflight || engine().busy) { stopAll(); runNumber++; setStatus('Cancelled.'); }
  });
  for (const id of ['revision', 'library', 'source', 'offline']) $(id).addEventListener('change', () => { if (model && model.origin !== 'local') run(); else { state = readInputs(); updateUrl(); } });
  $('endpoint').addEventListener('change', onEndpointChange);
  $('token').addEventListener('input', onTokenInput);
  $('token').addEventListener('change', () => { if (model && model.origin !== 'local') { fetched.clear(); run(); } });
  $('remember').addEventListener('change', saveToken);
  const recompute = () => {
    state = readInputs();
    $('source').disabled = state.mode === 'accelerate';
    updateUrl();
    if (model) {
      if (engine().busy) engine().restart();
      runNumber++;
      compute();
    }
  };
  for (const r of document.querySelectorAll('input[name=mode]')) r.addEventListener('change', () => {
    state = readInputs();
    state.dtypes = null;
    writeDtypes();
    recompute();
    if (model && model.origin !== 'local' && model.checkpoint === null && state.source === 'exact') run();
  });
  for (const b of document.querySelectorAll('input[name=dtype]')) b.addEventListener('change', recompute);
  $('class').addEventListener('change', recompute);
  $('copy-md').addEventListener('click', () => report && copy(reportMarkdown(report, shareUrl()), 'Markdown'));
  $('copy-json').addEventListener('click', () => report && copy(reportJson(report) + '\n', 'JSON'));
  $('copy-link').addEventListener('click', () => copy(shareUrl(), 'Link'));
  $('copy-plan').addEventListener('click', () => plan && copy(JSON.stringify(plan, null, 2) + '\n', 'Plan', 'copy-plan-status'));
  // The module loads while the Hub answers (a link with a model), or as soon as someone starts
  // typing — never on a visit that computes nothing.
  const warm = () => { engine().supported().catch(() => {}); };
  if (state.model) { warm(); run(); } else {
    setStatus('');
    $('model').addEventListener('focus', warm, { once: true });
    $('drop').addEventListener('dragenter', warm, { once: true });
  }
}

start();
