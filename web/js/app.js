// @ts-check
// The page: each card's module draws it and handles its inputs — the model form and its estimate
// (estimate.js), the visitor's own files (drop.js), the planner (planner.js), "will it run?"
// (run-panel.js), the token (token.js) — over the state the inputs describe (inputs.js, page.js).
// This file starts them and wires the form. Everything untrusted is shown as text (dom.js).

import { DEFAULT_IDLE_MS, engine } from './api.js';
import { catalog } from './catalog.js';
import { copy } from './copy.js';
import { el, replaceChildren } from './dom.js';
import { setupDrop } from './drop.js';
import { compute, forgetFetched, run, showRepo, stopAll, working } from './estimate.js';
import { fillChoices, readInputs, shareUrl, updateUrl, writeDtypes, writeInputs } from './inputs.js';
import { $, clampInt, current, fromHubOrCatalog, query } from './page.js';
import { debounce } from './panels.js';
import { setupPlanner } from './planner.js';
import { setupPrompt } from './prompt.js';
import { setupRun } from './run-panel.js';
import { setStatus } from './status.js';
import { onEndpointChange, onTokenInput, saveToken, setupToken } from './token.js';

performance.mark('memfit:app');
// ?idle=MS: how long an idle page keeps the WASM worker (the tests make it short)
engine().idleMs = clampInt(query.get('idle'), 1, 24 * 3600 * 1000, DEFAULT_IDLE_MS);

/** The popular models: the datalist of the model input, and a button each. */
async function setupCatalog() {
  const entries = [...(await catalog()).values()].sort((a, b) => a.id.localeCompare(b.id));
  replaceChildren($('catalog-ids'), entries.map((e) => el('option', { value: e.id })));
  replaceChildren($('catalog-list'), entries.map((e) => el('li', {},
    el('button', { type: 'button', class: 'link', 'data-model': e.id, onclick: () => { $('model').value = e.id; run(); } }, e.id))));
}

/** The estimate again for the inputs' mode, dtypes and class (the model stays). */
function recompute() {
  current.state = readInputs();
  $('source').disabled = current.state.mode === 'accelerate';
  updateUrl();
  if (current.model) {
    if (engine().busy) engine().restart();
    current.run++;
    compute();
  }
}

function setupForm() {
  $('model-form').addEventListener('submit', (/** @type {Event} */ e) => { e.preventDefault(); run(); });
  // a new input cancels what is being fetched for the old one
  $('model').addEventListener('input', () => {
    if (working()) { stopAll(); current.run++; setStatus('Cancelled.'); }
  });
  for (const id of ['revision', 'library', 'source', 'offline']) {
    $(id).addEventListener('change', () => { if (fromHubOrCatalog()) run(); else { current.state = readInputs(); updateUrl(); } });
  }
  $('endpoint').addEventListener('change', () => { onEndpointChange(); if (fromHubOrCatalog()) run(); });
  $('token').addEventListener('input', onTokenInput);
  $('token').addEventListener('change', () => { if (fromHubOrCatalog()) { forgetFetched(); run(); } });
  $('remember').addEventListener('change', saveToken);
  for (const r of document.querySelectorAll('input[name=mode]')) r.addEventListener('change', () => {
    current.state = readInputs();
    current.state.dtypes = null;
    writeDtypes();
    recompute();
    const { model, state } = current;
    if (model && model.origin !== 'local' && model.checkpoint === null && state.source === 'exact') run();
  });
  for (const b of document.querySelectorAll('input[name=dtype]')) b.addEventListener('change', recompute);
  $('class').addEventListener('change', recompute);
  $('copy-md').addEventListener('click', () => current.copyable && copy(current.copyable.markdown(), 'Markdown'));
  $('copy-json').addEventListener('click', () => current.copyable && copy(current.copyable.json() + '\n', 'JSON'));
  $('copy-link').addEventListener('click', () => copy(shareUrl(), 'Link'));
  // a repo of another kind is answered for the run panel's GPU and context: asked again, not fetched
  const repoAgain = debounce(() => {
    if (!current.model?.repo) return;
    current.state = readInputs();
    updateUrl();
    current.run++;
    showRepo();
  }, 120);
  for (const id of ['run-gpu', 'run-context']) {
    $(id).addEventListener('input', repoAgain);
    $(id).addEventListener('change', repoAgain);
  }
}

function start() {
  fillChoices();
  writeInputs();
  setupToken();
  setupDrop();
  setupPlanner();
  setupRun();
  setupPrompt();
  setupForm();
  // The module loads while the Hub answers (a link with a model), or as soon as someone starts
  // typing — never on a visit that computes nothing. The catalog's list (catalog.json) waits for
  // a link's first result: fetched beside the Hub's answers, it slowed them.
  const warm = () => { engine().start(); };
  if (current.state.model) { warm(); run().finally(setupCatalog); } else {
    setupCatalog();
    setStatus('');
    $('model').addEventListener('focus', warm, { once: true });
    $('drop').addEventListener('dragenter', warm, { once: true });
  }
}

start();
