// The static site's own rules, under node: index.html preloads exactly the modules app.js
// imports (directly or not), so none is fetched late, and none is fetched for nothing; the
// server sends precompressed files to clients that accept gzip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ROOT, WEB_DIR, need } from './support/paths.mjs';
import { serveStatic } from '../../web/tools/serve.mjs';
import { precompress } from '../../web/tools/build.mjs';

/** index.html's modulepreload links. @param {string} dir */
function preloads(dir) {
  const html = readFileSync(join(dir, 'index.html'), 'utf8');
  return [...html.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((m) => m[1]).sort();
}

/**
 * The js/ files FILE imports statically, directly or not ("import … from './x.js'", as written
 * by hand or minified by esbuild; dynamic import() excluded). @param {string} dir @param {string} file
 */
function staticImports(dir, file, seen = new Set()) {
  // js/supported.js is written by the build (it imports nothing)
  if (!existsSync(join(dir, file))) return [...seen].sort();
  const text = readFileSync(join(dir, file), 'utf8');
  for (const m of text.matchAll(/(?:^|[;}\s])import\s*(?:[\w$*{}\s,]+from\s*)?["']\.\/([\w-]+\.js)["']/g)) {
    const dep = `js/${m[1]}`;
    if (!seen.has(dep)) { seen.add(dep); staticImports(dir, dep, seen); }
  }
  return [...seen].sort();
}

test('index.html modulepreloads exactly the modules app.js imports: in web/, and in the bundled site', () => {
  const web = join(ROOT, 'web');
  const sources = staticImports(web, 'js/app.js');
  assert.ok(sources.length > 10, `web/js/app.js imports ${sources.length} modules`);
  assert.deepEqual(preloads(web), sources);
  // the built site: one bundle in js/app.js (web/tools/bundle.mjs), which imports only its
  // chunks, and none of the modules it was made from
  const built = need(WEB_DIR, 'the built site (web/tools/build.mjs)');
  const chunks = staticImports(built, 'js/app.js');
  assert.deepEqual(preloads(built), chunks);
  for (const c of chunks) assert.match(c, /^js\/chunk-\w+\.js$/);
});

test('the built embed.js fetches the widget\'s bundle and every chunk it needs at once', () => {
  const built = need(WEB_DIR, 'the built site (web/tools/build.mjs)');
  const stub = readFileSync(join(built, 'embed.js'), 'utf8');
  const fetched = [...stub.matchAll(/^(?:import|export \* from) '\.\/(js\/[\w-]+\.js)';$/gm)].map((m) => m[1]).sort();
  assert.ok(fetched.includes('js/embed.js'), `embed.js imports the bundle: ${stub}`);
  // the bundle's own static imports, all of them listed beside it: no second level
  const chunks = staticImports(built, 'js/embed.js');
  assert.deepEqual(fetched, ['js/embed.js', ...chunks].sort());
  // the bundle is whole: none of the modules it was made from is imported
  for (const f of chunks) assert.match(f, /^js\/chunk-\w+\.js$/);
});

/** GET url with the given request headers, raw (no decompression). @param {string} url @param {Record<string,string>} headers */
function get(url, headers = {}) {
  return new Promise((resolveGet, reject) => {
    http.get(url, { headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolveGet({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

test('the server sends FILE.gz to clients that accept gzip, never a stale one, and the build writes them', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'memfit-gz-'));
  const { close, url } = await serveStatic(dir);
  try {
    const text = 'memfit '.repeat(2000);
    writeFileSync(join(dir, 'a.js'), text);
    assert.ok(precompress(join(dir, 'a.js')) < text.length / 10);
    const plain = await get(`${url}/a.js`);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.body.toString(), text);
    const gz = await get(`${url}/a.js`, { 'Accept-Encoding': 'br, gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(gz.headers.vary, 'Accept-Encoding');
    assert.notEqual(gz.headers.etag, plain.headers.etag);
    assert.equal(gunzipSync(gz.body).toString(), text);
    // a .gz older than its file is not served
    utimesSync(join(dir, 'a.js.gz'), new Date(0), new Date(0));
    const stale = await get(`${url}/a.js`, { 'Accept-Encoding': 'gzip' });
    assert.equal(stale.headers['content-encoding'], undefined);
    assert.equal(stale.body.toString(), text);
  } finally {
    await close();
    rmSync(dir, { recursive: true, force: true });
  }
  // The assembled site: the module's .gz files hold exactly the module.
  for (const f of ['memfit.wasm', 'memfit.mjs']) {
    const file = join(need(WEB_DIR, 'the built site'), 'wasm', f);
    assert.deepEqual(gunzipSync(readFileSync(`${file}.gz`)), readFileSync(file));
  }
});
