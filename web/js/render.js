// @ts-check
// Results as DOM (text only, see dom.js) and as text to copy: the accelerate table, memfit's
// breakdown, a bar chart per dtype, the module sizes, Markdown and JSON.

import { el, svg } from './dom.js';
import { convertBytes, withCommas, shortCount } from './format.js';

/** @typedef {import('./api.js').EstimateReply} EstimateReply */

/** The report as `memfit estimate --json` prints it (the api adds only "table"). @param {EstimateReply} r */
export function reportJson(r) {
  const { table, ...rest } = r;
  return JSON.stringify(rest, null, 2);
}

/** @param {string} s */
function mdCell(s) {
  return String(s).replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/[<>]/g, (c) => (c === '<' ? '&lt;' : '&gt;'));
}

/** A Markdown summary: the table as a Markdown table, parameters and notes. @param {EstimateReply} r @param {string} [link] */
export function reportMarkdown(r, link) {
  const lines = [
    `### Memory usage for \`${r.name.replace(/`/g, "'")}\``,
    '',
    `${mdCell(r.model_class)} (${mdCell(r.library)} ${mdCell(r.model_type)}), ${withCommas(r.parameters)} parameters — memfit, ${r.mode === 'accelerate' ? 'accelerate-compatible' : 'memfit'} mode`,
    '',
    '| dtype | Largest Layer | Total Size | Training using Adam |',
    '|---|---|---|---|',
    ...r.rows.map((row) => `| ${mdCell(row.dtype)} | ${mdCell(row.largest_layer)} | ${mdCell(row.total)} | ${mdCell(row.training)} |`),
  ];
  if (r.notes.length) lines.push('', ...r.notes.map((n) => `- ${mdCell(n)}`));
  if (link) lines.push('', `[Open in memfit](${link})`);
  return lines.join('\n') + '\n';
}

/**
 * The whole results view.
 * @param {EstimateReply} r
 * @param {{info?: any, exact?: {files: number, bytesRead: number, indexTotal: number | null} | null, origin?: string, sourceNotes?: string[], ms?: number}} [extra]
 */
export function renderReport(r, extra = {}) {
  const root = el('div', { class: 'report' });
  const facts = [
    `${r.model_class} (${r.library} ${r.model_type})`,
    `${withCommas(r.parameters)} parameters (${shortCount(r.parameters)})`,
    `buffers ${convertBytes(r.buffers_bytes)}`,
  ];
  if (r.source === 'checkpoint' && r.stored_bytes !== undefined) {
    facts.push(`exact: safetensors headers, ${convertBytes(r.stored_bytes)} stored`);
  }
  root.append(
    el('h2', { id: 'results-title', class: 'model-name' }, r.name),
    el('p', { class: 'facts' }, facts.join(' · ')),
  );
  const hubTotal = extra.info?.safetensors?.total;
  if (typeof hubTotal === 'number') {
    const same = hubTotal === r.parameters;
    root.append(el('p', { class: same ? 'check ok' : 'check' },
      `The Hub counts ${withCommas(hubTotal)} parameters in the safetensors files${same ? ' — the same.' : ` (memfit: ${withCommas(r.parameters)}; ${describeDifference(hubTotal, r.parameters)}).`}`));
  }
  if (extra.exact) {
    root.append(el('p', { class: 'check' },
      `Read ${withCommas(extra.exact.bytesRead)} header bytes of ${extra.exact.files} safetensors file${extra.exact.files === 1 ? '' : 's'} by HTTP Range.`));
  }
  for (const n of extra.sourceNotes || []) root.append(el('p', { class: 'check' }, n));
  // Which figures are exact and which are guesses (a model type no family knows: docs/api.md).
  const guesses = (r.figures || []).filter((/** @type {any} */ f) => !f.exact);
  if (guesses.length) {
    root.append(el('p', { class: 'check approx' }, `Approximate: ${guesses.map((/** @type {any} */ f) =>
      `${f.figure.replace('_', ' ')} (${f.basis})`).join(', ')}. Exact: ${(r.figures || [])
      .filter((/** @type {any} */ f) => f.exact).map((/** @type {any} */ f) => `${f.figure.replace('_', ' ')} (${f.basis})`)
      .join(', ') || 'none'}.`));
  }

  root.append(
    el('h3', {}, r.mode === 'accelerate' ? 'accelerate estimate-memory' : 'Summary table'),
    el('pre', { class: 'table', tabindex: '0', 'aria-label': 'memory table, as the command line prints it' }, r.table),
    breakdown(r),
    chart(r),
    modules(r),
  );
  if (r.largest_layer_names.length) {
    const names = r.largest_layer_names;
    root.append(el('p', { class: 'largest' }, 'Largest layer: ',
      el('code', {}, names.slice(0, 4).join(', ')),
      names.length > 4 ? ` (+${names.length - 4} more of the same size)` : ''));
  }
  if (r.notes.length) {
    root.append(el('h3', {}, 'Notes'), el('ul', { class: 'notes' }, r.notes.map((n) => el('li', {}, n))));
  }
  if (r.comparison) root.append(comparison(r.comparison));
  return root;
}

/** @param {number} a @param {number} b */
function describeDifference(a, b) {
  const d = b - a;
  return `${d > 0 ? '+' : '−'}${withCommas(Math.abs(d))}, ${(Math.abs(d) / Math.max(a, 1) * 100).toFixed(2)}%`;
}

/** memfit's breakdown: one row per dtype, the training parts spelled out. @param {EstimateReply} r */
function breakdown(r) {
  const hasParts = r.rows.some((row) => row.training_parts);
  const table = el('table', { class: 'breakdown' },
    el('caption', {}, 'Breakdown per dtype'),
    el('thead', {}, el('tr', {},
      el('th', { scope: 'col' }, 'dtype'), el('th', { scope: 'col' }, 'Largest layer'),
      el('th', { scope: 'col' }, 'Total (load)'), el('th', { scope: 'col' }, 'Training (Adam)'),
      hasParts ? el('th', { scope: 'col' }, 'Training parts') : null)),
    el('tbody', {}, r.rows.map((row) => el('tr', { 'data-dtype': row.dtype },
      el('th', { scope: 'row' }, row.dtype),
      el('td', { 'data-bytes': row.largest_layer_bytes }, row.largest_layer),
      el('td', { 'data-bytes': row.total_bytes }, row.total),
      el('td', { 'data-bytes': row.training_bytes ?? '' }, row.training),
      hasParts ? el('td', { class: 'parts' }, Object.entries(row.training_parts || {})
        .filter(([, v]) => v > 0).map(([k, v]) => `${k} ${convertBytes(v)}`).join(' + ')) : null))));
  return el('div', { class: 'scroll' }, table);
}

/** An SVG bar chart: per dtype, the total to load and (where known) to train. @param {EstimateReply} r */
export function chart(r) {
  const rows = r.rows;
  const max = Math.max(1, ...rows.map((row) => Math.max(row.total_bytes, row.training_bytes ?? 0)));
  const barH = 16, gap = 10, labelW = 76, barW = 400, W = 640;
  const rowH = barH * 2 + 4 + gap;
  const H = rows.length * rowH + 28;
  const g = svg('svg', {
    viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img',
    'aria-label': `Bar chart: memory per dtype, ${rows.map((row) => `${row.dtype} ${row.total}`).join(', ')}`,
  });
  g.append(svg('title', {}, 'Memory per dtype: load (total) and training'));
  rows.forEach((row, i) => {
    const y = 4 + i * rowH;
    g.append(svg('text', { x: labelW - 8, y: y + barH + 2, 'text-anchor': 'end', class: 'label' }, row.dtype));
    const w1 = Math.max(1, (row.total_bytes / max) * barW);
    g.append(svg('rect', { x: labelW, y, width: w1, height: barH, rx: 3, class: 'bar load' },
      svg('title', {}, `${row.dtype}: ${row.total} to load`)));
    g.append(svg('text', { x: labelW + w1 + 6, y: y + barH - 3, class: 'value' }, `${row.total} load`));
    if (row.training_bytes !== null && row.training_bytes !== undefined) {
      const w2 = Math.max(1, (row.training_bytes / max) * barW);
      g.append(svg('rect', { x: labelW, y: y + barH + 4, width: w2, height: barH, rx: 3, class: 'bar train' },
        svg('title', {}, `${row.dtype}: ${row.training} to train`)));
      g.append(svg('text', { x: labelW + w2 + 6, y: y + 2 * barH + 1, class: 'value' }, `${row.training} train`));
    } else {
      g.append(svg('text', { x: labelW, y: y + 2 * barH + 1, class: 'value muted' }, 'training: N/A'));
    }
  });
  g.append(svg('rect', { x: labelW, y: H - 18, width: 12, height: 10, class: 'bar load' }),
    svg('text', { x: labelW + 16, y: H - 9, class: 'value' }, 'load (total)'),
    svg('rect', { x: labelW + 120, y: H - 18, width: 12, height: 10, class: 'bar train' }),
    svg('text', { x: labelW + 136, y: H - 9, class: 'value' }, 'training with Adam'));
  return el('figure', { class: 'chart-figure' }, g, el('figcaption', {}, 'Memory per dtype'));
}

/**
 * Module sizes, largest first, at a chosen depth of the module tree (float32 bytes, as
 * accelerate's compute_module_sizes; the share is of the whole model).
 * @param {EstimateReply} r
 */
function modules(r) {
  const sizes = r.module_sizes;
  const total = sizes[''] || Object.values(sizes).reduce((a, b) => Math.max(a, b), 0) || 1;
  const names = Object.keys(sizes).filter((k) => k !== '');
  // A name at or below a repeated module stands for one copy of many (routed experts).
  const repeats = Object.entries(r.module_repeats || {});
  /** @param {string} k */
  const copies = (k) => repeats.reduce((n, [name, c]) => (k === name || k.startsWith(`${name}.`) ? n * c : n), 1);
  const maxDepth = Math.min(6, Math.max(1, ...names.map((k) => k.split('.').length)));
  const list = el('ol', { class: 'modules', 'aria-live': 'polite' });
  const depthSelect = /** @type {HTMLSelectElement} */ (el('select', { id: 'module-depth', 'aria-label': 'depth in the module tree' },
    Array.from({ length: maxDepth }, (_, i) => el('option', { value: i + 1 }, `depth ${i + 1}`))));
  const showAll = /** @type {HTMLInputElement} */ (el('input', { type: 'checkbox', id: 'module-all' }));
  const draw = () => {
    const depth = Number(depthSelect.value);
    const rows = names.filter((k) => k.split('.').length === depth).sort((a, b) => sizes[b] - sizes[a]);
    const shown = showAll.checked ? rows : rows.slice(0, 20);
    list.replaceChildren(...shown.map((k) => {
      const bar = el('span', { class: 'bar' });
      bar.style.width = `${Math.max(0.5, (sizes[k] / total) * 100)}%`;
      const n = copies(k);
      const each = n > 1 ? ` each, × ${n}` : '';
      return el('li', {},
        el('span', { class: 'name' }, el('code', {}, k), n > 1 ? ` (1 of ${n} alike)` : ''),
        el('span', { class: 'size' }, `${convertBytes(sizes[k])} · ${((sizes[k] / total) * 100).toFixed(1)}%${each}`),
        el('span', { class: 'track', 'aria-hidden': 'true' }, bar));
    }));
    if (rows.length > shown.length) list.append(el('li', { class: 'more' }, `${rows.length - shown.length} smaller modules not shown`));
  };
  // start at the first depth with a few modules to compare (depth 1 is often just "model")
  for (let d = 1; d <= maxDepth; d++) {
    if (names.filter((k) => k.split('.').length === d).length >= 4 || d === Math.min(3, maxDepth)) { depthSelect.value = String(d); break; }
  }
  depthSelect.addEventListener('change', draw);
  showAll.addEventListener('change', draw);
  draw();
  return el('section', { class: 'module-sizes', 'aria-labelledby': 'modules-title' },
    el('h3', { id: 'modules-title' }, 'Module sizes (float32), largest first'),
    el('div', { class: 'controls' }, depthSelect, el('label', {}, showAll, ' show all')),
    list);
}

/** The config tree compared with the checkpoint's tensors (exact mode). @param {any} c */
function comparison(c) {
  const items = [];
  if (c.matches) items.push(el('li', {}, 'The checkpoint holds exactly the tensors the config describes.'));
  if (c.prefix_note) items.push(el('li', {}, c.prefix_note));
  for (const [key, label] of [['missing', 'in the config tree, not in the checkpoint'], ['unexpected', 'in the checkpoint, not in the config tree']]) {
    const names = c[key] || [];
    if (names.length) {
      items.push(el('li', {}, `${names.length} tensor${names.length === 1 ? '' : 's'} ${label}: `,
        el('code', {}, names.slice(0, 5).join(', ')), names.length > 5 ? ', …' : ''));
    }
  }
  for (const m of (c.shape_mismatches || []).slice(0, 5)) {
    items.push(el('li', {}, el('code', {}, m.name), ` has shape [${m.got}], the config implies [${m.expected}]`));
  }
  for (const d of (c.dtype_differences || []).slice(0, 5)) {
    items.push(el('li', {}, el('code', {}, d.name), ` is stored as ${d.got} (${d.expected} expected)`));
  }
  return el('section', { class: 'comparison' }, el('h3', {}, 'Config vs checkpoint'), el('ul', {}, items));
}
