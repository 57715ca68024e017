// The static site's own rules, under node: index.html preloads exactly the modules app.js
// imports (directly or not), so none is fetched late, and none is fetched for nothing; the
// server sends precompressed files to clients that accept gzip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { WEB_DIR, need } from './support/paths.mjs';
import { serveStatic } from '../../web/tools/serve.mjs';
import { precompress } from '../../web/tools/build.mjs';

test('index.html modulepreloads exactly the modules app.js imports', () => {
  // the built site: it holds js/supported.js, which the build writes
  const web = need(WEB_DIR, 'the built site (web/tools/build.mjs)');
  const html = readFileSync(join(web, 'index.html'), 'utf8');
  const preloaded = [...html.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((m) => m[1]).sort();
  const seen = new Set();
  const walk = (/** @type {string} */ file) => {
    for (const m of readFileSync(join(web, file), 'utf8').matchAll(/^import .* from '\.\/([\w-]+\.js)';$/gm)) {
      const dep = `js/${m[1]}`;
      if (!seen.has(dep)) { seen.add(dep); walk(dep); }
    }
  };
  walk('js/app.js');
  assert.deepEqual(preloaded, [...seen].sort());
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
