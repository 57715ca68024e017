#!/usr/bin/env node
// A static file server for the site (scripts/run.sh serve, and the browser tests):
//   node web/tools/serve.mjs [--root build/web] [--host 127.0.0.1] [--port 8080]
// Right MIME types (application/wasm for streaming compilation), CORS for embed.js on other
// sites, no-cache with ETags, nothing outside the root, and a precompressed FILE.gz (written by
// build.mjs) in place of FILE for clients that accept gzip.
import { createServer } from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import { extname, join, normalize, resolve, sep, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8', '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon', '.txt': 'text/plain; charset=utf-8',
};

/**
 * FILE.gz when it exists and is not older than FILE (a stale one is ignored, not served).
 * @param {string} file
 * @param {import('node:fs').Stats} st
 */
function gzipped(file, st) {
  try {
    const gst = statSync(`${file}.gz`);
    return gst.isFile() && gst.mtimeMs >= st.mtimeMs ? { file: `${file}.gz`, st: gst } : null;
  } catch {
    return null;
  }
}

/**
 * @param {string} rootDir
 * @param {{host?: string, port?: number, log?: boolean}} [o]
 * @returns {Promise<{server: import('node:http').Server, url: string, close: () => Promise<void>}>}
 */
export function serveStatic(rootDir, { host = '127.0.0.1', port = 0, log = false } = {}) {
  const root = resolve(rootDir);
  const server = createServer((req, res) => {
    const headers = {
      'Access-Control-Allow-Origin': '*', 'Cross-Origin-Resource-Policy': 'cross-origin',
      'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-cache', 'Referrer-Policy': 'no-referrer',
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(req.method === 'OPTIONS' ? 204 : 405, { ...headers, Allow: 'GET, HEAD' });
      res.end();
      return;
    }
    let path;
    try {
      path = decodeURIComponent(new URL(req.url || '/', 'http://x').pathname);
    } catch {
      res.writeHead(400, headers).end('bad request\n');
      return;
    }
    let file = normalize(join(root, path));
    if (file !== root && !file.startsWith(root + sep)) {
      res.writeHead(403, headers).end('forbidden\n');
      return;
    }
    let st;
    try {
      st = statSync(file);
      if (st.isDirectory()) { file = join(file, 'index.html'); st = statSync(file); }
    } catch {
      res.writeHead(404, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
      if (log) console.log(`404 ${path}`);
      return;
    }
    const type = TYPES[/** @type {keyof TYPES} */ (extname(file).toLowerCase())] || 'application/octet-stream';
    /** @type {Record<string, string>} */
    const encoding = { Vary: 'Accept-Encoding' };
    const gz = /\bgzip\b/.test(String(req.headers['accept-encoding'] || '')) ? gzipped(file, st) : null;
    if (gz) {
      file = gz.file;
      st = gz.st;
      encoding['Content-Encoding'] = 'gzip';
    }
    const etag = `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}${gz ? '-gz' : ''}"`;
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, { ...headers, ...encoding, ETag: etag }).end();
      return;
    }
    res.writeHead(200, { ...headers, ...encoding, ETag: etag, 'Content-Length': st.size, 'Content-Type': type });
    if (req.method === 'HEAD') { res.end(); return; }
    createReadStream(file).pipe(res);
    if (log) console.log(`200 ${path}`);
  });
  return new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const addr = /** @type {import('node:net').AddressInfo} */ (server.address());
      resolvePromise({
        server, url: `http://${host}:${addr.port}`,
        close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
      });
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  let root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'build', 'web');
  let host = '127.0.0.1', port = 8080;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--root') root = args[++i];
    else if (args[i] === '--host') host = args[++i];
    else if (args[i] === '--port') port = Number(args[++i]);
    else { console.error(`serve.mjs: unknown argument ${args[i]}`); process.exit(2); }
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) { console.error('serve.mjs: --port needs 0..65535'); process.exit(2); }
  serveStatic(root, { host, port }).then(({ url }) => {
    console.log(`memfit: serving ${root} at ${url}/ (Ctrl+C to stop)`);
  }, (e) => { console.error(`memfit: cannot serve on ${host}:${port}: ${e.message}`); process.exit(1); });
}
