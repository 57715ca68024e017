// @ts-check
// "Your own files": config.json, safetensors files (only their headers are read) and index files,
// dropped, chosen or pasted, become the model on the page. Nothing leaves the browser.

import { assemble, classifyJson, readFile } from './files.js';
import { withCommas } from './format.js';
import { HubError } from './hub.js';
import { compute, stopAll } from './estimate.js';
import { readInputs } from './inputs.js';
import { ModelError, parseHeader } from './model.js';
import { $, current } from './page.js';
import { isRepoId } from './state.js';
import { hideError, setStatus, showError } from './status.js';

/** @param {File[]} files */
async function useFiles(files) {
  if (!files.length) return;
  stopAll();
  const mine = ++current.run;
  hideError();
  setStatus(`Reading ${files.length} file${files.length === 1 ? '' : 's'}…`);
  try {
    const read = await Promise.all(files.map((f) => readFile(f)));
    await useLocal(read, mine);
  } catch (e) {
    if (mine === current.run) showError(e instanceof ModelError || e instanceof HubError ? e : new ModelError('file', e instanceof Error ? e.message : String(e)));
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
  if (mine !== current.run) return;
  const state = current.state = readInputs();
  const typed = state.model;
  const cfgName = drop.config && typeof drop.config._name_or_path === 'string' ? drop.config._name_or_path : '';
  const name = isRepoId(typed) ? typed : isRepoId(cfgName) ? cfgName : (read.find((f) => f.kind === 'config')?.name || drop.shards[0]?.name || 'config.json');
  const model = current.model = {
    name, library: state.library === 'auto' ? '' : state.library, config: drop.config, checkpoint,
    origin: 'local', notes: ['From your files (nothing was uploaded).', ...drop.warnings],
    exact: checkpoint ? { files: drop.shards.length, bytesRead, indexTotal: drop.index ? drop.index.totalSize : null } : null,
  };
  if (checkpoint && state.mode === 'accelerate') model.notes.push('The safetensors headers are used in memfit mode only (accelerate builds from the config).');
  await compute();
}

/** @param {string} text */
async function usePastedText(text) {
  stopAll();
  const mine = ++current.run;
  hideError();
  try {
    await useLocal([classifyJson(text, 'pasted text')], mine);
  } catch (e) {
    showError(e instanceof ModelError || e instanceof HubError ? e : new ModelError('invalid_json', e instanceof Error ? e.message : String(e)));
  }
}

/** The drop zone, the file chooser, the paste box, and files or a config pasted on the page. */
export function setupDrop() {
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
