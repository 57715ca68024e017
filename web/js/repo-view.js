// @ts-check
// A repo report (repo.js; report_json in docs/api.md) as DOM and as Markdown, without knowing its
// kind: the title, one table per entry of `tables` (the first is the kind's main view: a GGUF
// repo's quantizations), the summary lines, the notes. What `memfit estimate ORG/NAME` prints,
// drawn as HTML. Loaded only when such a report is shown (page and widget).

import { el } from './dom.js';
import { convertBytes, withCommas } from './format.js';

/** @typedef {import('./repo.js').RepoReport} RepoReport */

/** One of the report's tables. @param {{title: string, columns: string[], rows: string[][]}} t @param {number} i */
export function repoTable(t, i) {
  const table = el('table', { class: 'breakdown repo-table', 'data-table': String(i) },
    t.title ? el('caption', {}, t.title) : null,
    el('thead', {}, el('tr', {}, t.columns.map((c) => el('th', { scope: 'col' }, c)))),
    el('tbody', {}, t.rows.map((row) => el('tr', {}, row.map((cell, j) =>
      j === 0 ? el('th', { scope: 'row' }, cell) : el('td', {}, cell))))));
  return el('div', { class: 'scroll' }, table);
}

/**
 * The whole report (the page's results card).
 * @param {RepoReport} r
 * @param {{name: string, sourceNotes?: string[], options?: string, answer?: {text: string, fits: boolean} | null}} extra
 */
export function renderRepoReport(r, extra) {
  const root = el('div', { class: 'report repo-report', 'data-kind': r.kind });
  root.append(
    el('h2', { id: 'results-title', class: 'model-name' }, extra.name),
    el('p', { class: 'facts' }, r.title || r.kind),
  );
  if (extra.answer) root.append(el('p', { class: `verdict repo-answer${extra.answer.fits ? ' fits' : ''}` }, el('strong', {}, extra.answer.text)));
  if (extra.options) root.append(el('p', { class: 'check' }, extra.options));
  for (const n of extra.sourceNotes || []) root.append(el('p', { class: 'check' }, n));
  r.tables.forEach((t, i) => root.append(repoTable(t, i)));
  if (r.lines.length) root.append(el('div', { class: 'repo-lines' }, r.lines.map((l) => el('p', {}, l))));
  if (r.notes.length) root.append(el('h3', {}, 'Notes'), el('ul', { class: 'notes' }, r.notes.map((n) => el('li', {}, n))));
  return root;
}

/**
 * The kind's answer in one line, where it has one (the widget shows it above the main table):
 * GGUF, the largest quantization that fits with every layer on the GPU (fields.models, docs/api.md);
 * diffusers, the first offload mode that fits (fields.offload). From the report's fields, for the
 * GPU they were asked for (`gpu`: its name and memory, as the line should say it).
 * @param {RepoReport} r @param {string} gpu
 * @returns {{text: string, fits: boolean} | null}
 */
export function repoAnswer(r, gpu) {
  const f = r.fields || {};
  if (r.kind === 'gguf' && Array.isArray(f.models) && typeof f.vram === 'number') {
    const at = `at ${withCommas(f.ctx_size)} tokens`;
    const fits = f.models.filter((/** @type {any} */ m) => m.fits === true);
    const name = (/** @type {any} */ m) => m.quant || m.file;
    if (fits.length) {
      const best = fits.reduce((/** @type {any} */ a, /** @type {any} */ b) => (b.vram_needed > a.vram_needed ? b : a));
      return { fits: true, text: `Largest that fits ${gpu} ${at}: ${name(best)} (${convertBytes(best.vram_needed)} with every layer on the GPU)` };
    }
    const smallest = f.models.find((/** @type {any} */ m) => typeof m.vram_needed === 'number');
    if (!smallest) return null;
    return { fits: false, text: `None fits ${gpu} ${at}: the smallest, ${name(smallest)}, needs ${convertBytes(smallest.vram_needed)}` +
      (smallest.max_gpu_layers ? ` (--gpu-layers ${smallest.max_gpu_layers} fits, the rest on the CPU)` : '') };
  }
  if (r.kind === 'diffusers' && f.offload && f.gpu_bytes > 0) {
    const modes = [['none', 'with no offload'], ['model', 'with enable_model_cpu_offload()'], ['sequential', 'with enable_sequential_cpu_offload()']];
    const mode = modes.find(([k]) => f.offload[k]?.fits === true);
    if (!mode) return { fits: false, text: `Does not fit ${gpu}, even with enable_sequential_cpu_offload() (weights alone)` };
    return { fits: true, text: `Fits ${gpu} ${mode[1]}: ${convertBytes(f.offload[mode[0]].peak_bytes)} of weights at the peak` };
  }
  return null;
}

/** @param {string} s */
function mdCell(s) {
  return String(s).replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/[<>]/g, (c) => (c === '<' ? '&lt;' : '&gt;'));
}

/** The report as Markdown. @param {RepoReport} r @param {string} name @param {string} [link] */
export function repoMarkdown(r, name, link) {
  const lines = [`### \`${name.replace(/`/g, "'")}\` — ${mdCell(r.title || r.kind)}`];
  for (const t of r.tables) {
    lines.push('', t.title ? `**${mdCell(t.title)}**` : '', '', `| ${t.columns.map(mdCell).join(' | ')} |`,
      `|${t.columns.map(() => '---').join('|')}|`, ...t.rows.map((row) => `| ${row.map(mdCell).join(' | ')} |`));
  }
  if (r.lines.length) lines.push('', ...r.lines.map(mdCell));
  if (r.notes.length) lines.push('', ...r.notes.map((n) => `- ${mdCell(n)}`));
  if (link) lines.push('', `[Open in memfit](${link})`);
  return lines.join('\n') + '\n';
}
