// The page's, the embed widget's and the worker's scripts as one file each: web/tools/build.mjs
// calls bundlePage on the assembled site.
//
// Why: index.html's module graph is two dozen small files. Over HTTP/1.1 (a static server, a
// local one) a browser opens six connections per host, so the worker's own script — fetched at
// idle priority — queued behind them, and the WASM module behind it: on a first visit the
// worker began ~100 ms late. One file (plus a chunk per dynamic import: repo.js, repo-view.js,
// loaded only for repos of other kinds) ends that, and is smaller minified. The widget, loaded
// from another site, fetched its modules three levels deep, a round trip each.
//
// esbuild (Debian's package) bundles: a well-kept bundler, one static binary, nothing from npm.
// The page's bundle replaces js/app.js, so index.html's <script> and every
// `new URL(…, import.meta.url)` in the modules (worker.js, catalog.json, beside and above js/)
// resolve as before. The modules themselves stay in js/ (the tests import them).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * ENTRY (a module of the site) bundled by esbuild into SITE/js/NAME.js, with a chunk per
 * dynamic import (and the code those share with it) beside it. Returns the chunks the bundle
 * imports statically: preloaded beside it, so they cost no second round trip.
 * @param {string} site @param {string} entry  relative to site @param {string} name
 * @returns {string[]}
 */
function esbuild(site, entry, name, extra = []) {
  const tmp = mkdtempSync(join(site, '.bundle-'));
  try {
    const meta = join(tmp, 'meta.json');
    const out = join(tmp, 'out');
    const r = spawnSync('esbuild', [join(site, entry), '--bundle', '--format=esm', '--splitting', '--minify',
      '--target=es2022', '--legal-comments=none', '--sourcemap=linked', '--log-level=warning',
      `--entry-names=${name}`, '--chunk-names=[name]-[hash]', `--outdir=${out}`, `--metafile=${meta}`, ...extra],
    { encoding: 'utf8' });
    if (r.error) {
      throw new Error(`build.mjs: cannot run esbuild (${r.error.message}): install it (apt-get install esbuild)`);
    }
    if (r.status !== 0) throw new Error(`build.mjs: esbuild failed bundling ${entry}:\n${r.stderr}`);
    const outputs = JSON.parse(readFileSync(meta, 'utf8')).outputs;
    const bundle = Object.values(outputs).find((o) => o.entryPoint);
    if (!bundle) throw new Error(`build.mjs: esbuild wrote no bundle for ${entry}`);
    for (const f of readdirSync(out)) renameSync(join(out, f), join(site, 'js', f));
    return bundle.imports.filter((/** @type {any} */ i) => i.kind === 'import-statement')
      .map((/** @type {any} */ i) => i.path.split('/').pop());
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * Bundles the page (SITE/js/app.js, in place; index.html's modulepreload links become the
 * bundle's chunks) and the embed widget (SITE/embed.js: what other sites load, bundled into
 * js/embed.js — in js/ because the modules' `import.meta.url` paths are relative to js/ — and
 * embed.js becomes a stub that imports it and its chunks at once: one level of requests, where
 * the modules were three).
 * @param {string} site  the assembled site (build/web)
 */
export function bundlePage(site) {
  rewriteIndex(join(site, 'index.html'), esbuild(site, 'js/app.js', 'app'));
  const chunks = esbuild(site, 'embed.js', 'embed');
  writeFileSync(join(site, 'embed.js'), '// memfit\'s embed widget (web/embed.js), bundled by web/tools/bundle.mjs: ' +
    'js/embed.js, and its chunks fetched beside it.\n' +
    chunks.map((c) => `import './js/${c}';\n`).join('') + "export * from './js/embed.js';\n");
  // The worker, with the first module's glue (../wasm/memfit.mjs) in it: one request where its
  // start-up made two in a row. 'module' is node's, imported by the glue only under node (the tests).
  const workerChunks = esbuild(site, 'js/worker.js', 'worker', ['--external:module']);
  if (workerChunks.length) throw new Error(`build.mjs: the worker's bundle imports chunks (${workerChunks.join(', ')}): it must be one file`);
}

/**
 * index.html's modulepreload links (the unbundled graph's) → one per chunk the bundle imports.
 * @param {string} file @param {string[]} chunks
 */
function rewriteIndex(file, chunks) {
  const html = readFileSync(file, 'utf8');
  const link = /^[ \t]*<link rel="modulepreload" href="js\/[\w-]+\.js">\n/gm;
  if (!link.test(html)) throw new Error(`build.mjs: ${file} has no modulepreload links to replace`);
  const indent = /^([ \t]*)<link rel="modulepreload"/m.exec(html)?.[1] ?? '';
  let first = true;
  const note = chunks.length ? `${indent}<!-- the chunks the bundle imports, fetched beside it -->\n` : '';
  const rewritten = html.replace(/^[ \t]*<!-- the modules app\.js imports[^\n]*-->\n/m, note).replace(link, () => {
    if (!first) return '';
    first = false;
    return chunks.map((c) => `${indent}<link rel="modulepreload" href="js/${c}">\n`).join('');
  });
  writeFileSync(file, rewritten);
}
