// The page's scripts as one file: web/tools/build.mjs calls bundlePage on the assembled site.
//
// Why: index.html's module graph is two dozen small files. Over HTTP/1.1 (a static server, a
// local one) a browser opens six connections per host, so the worker's own script — fetched at
// idle priority — queued behind them, and the WASM module behind it: on a first visit the
// worker began ~100 ms late. One file (plus a chunk per dynamic import: repo.js, repo-view.js,
// loaded only for repos of other kinds) ends that, and is smaller minified.
//
// esbuild (Debian's package) bundles: a well-kept bundler, one static binary, nothing from npm.
// The bundle replaces js/app.js, so index.html's <script> and every `new URL(…, import.meta.url)`
// in the page's modules (worker.js, catalog.json, both beside/above js/) resolve as before.
// The modules themselves stay in js/: the embed widget (embed-page.js) and the tests import them.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Bundles SITE/js/app.js in place and rewrites SITE/index.html's modulepreload links to the
 * bundle's static imports (none or a shared chunk). Returns the files written (relative to js/).
 * @param {string} site  the assembled site (build/web)
 * @returns {string[]}
 */
export function bundlePage(site) {
  const js = join(site, 'js');
  const tmp = mkdtempSync(join(site, '.bundle-'));
  try {
    const meta = join(tmp, 'meta.json');
    const r = spawnSync('esbuild', [join(js, 'app.js'), '--bundle', '--format=esm', '--splitting', '--minify',
      '--target=es2022', '--legal-comments=none', '--sourcemap=linked', '--log-level=warning',
      '--entry-names=[name]', '--chunk-names=[name]-[hash]', `--outdir=${join(tmp, 'out')}`, `--metafile=${meta}`],
    { encoding: 'utf8' });
    if (r.error) {
      throw new Error(`build.mjs: cannot run esbuild (${r.error.message}): install it (apt-get install esbuild)`);
    }
    if (r.status !== 0) throw new Error(`build.mjs: esbuild failed bundling js/app.js:\n${r.stderr}`);
    const out = join(tmp, 'out');
    const files = readdirSync(out);
    // what the entry imports statically: preloaded, so no second round trip
    const outputs = JSON.parse(readFileSync(meta, 'utf8')).outputs;
    const entry = Object.entries(outputs).find(([, o]) => o.entryPoint)?.[1];
    if (!entry) throw new Error('build.mjs: esbuild wrote no entry point for js/app.js');
    const preload = entry.imports.filter((i) => i.kind === 'import-statement').map((i) => i.path.split('/').pop());
    for (const f of files) renameSync(join(out, f), join(js, f));
    rewriteIndex(join(site, 'index.html'), preload);
    return files;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
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
