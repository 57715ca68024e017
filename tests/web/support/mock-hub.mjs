// A mock Hugging Face Hub on 127.0.0.1 (a free port) for the browser tests: /api/models/{id}
// and /{id}/resolve/{revision}/{file} with CORS, HTTP Range, gated repos (401/403 with
// X-Error-Code: GatedRepo), 404s with the Hub's error codes, a slow repo, and a "CDN" on a
// second origin that LFS files redirect to. Every request is logged (path, Authorization, Range).
//
// Repos: every tests/fixtures/configs/org--name.json as org/name (config only), the golden
// checkpoints of ../shared/reference/golden as memfit-test/tiny-gpt2[-sharded] and
// memfit-test/tiny-llama[-sharded], and the special repos in SPECIAL below. gpt2 and
// meta-llama/Meta-Llama-3-70B also serve the real tokenizer.json of golden/tokenizers. The repos
// of other kinds (GGUF, diffusers, sentence-transformers, PEFT) come from repo-fixtures.mjs.
// /api/models lists each repo's files as `siblings`, with their sizes under ?blobs=true.
import { createServer } from 'node:http';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIGS, GOLDEN } from './paths.mjs';
import { Sparse, kindRepos } from './repo-fixtures.mjs';

export const TOKEN = 'hf_memfit_test_token_0123456789';
export const XSS = '<img src=x onerror="window.__xss=(window.__xss||0)+1">';

/** Sums the parameters of safetensors files (what the Hub's "safetensors" field reports). */
function parameterCount(files) {
  let total = 0;
  for (const buf of files) {
    const n = Number(buf.readBigUInt64LE(0));
    const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
    for (const [k, t] of Object.entries(header)) if (k !== '__metadata__') total += t.shape.reduce((a, b) => a * b, 1);
  }
  return total;
}

function goldenRepo(dir, { sharded = false } = {}) {
  const files = new Map();
  const from = sharded ? join(dir, 'sharded') : dir;
  files.set('config.json', readFileSync(join(dir, 'config.json')));
  for (const f of readdirSync(from)) if (f.endsWith('.safetensors') || f.endsWith('.index.json')) files.set(f, readFileSync(join(from, f)));
  const weights = [...files].filter(([f]) => f.endsWith('.safetensors')).map(([, b]) => b);
  return { library: 'transformers', files, safetensors: { total: parameterCount(weights) } };
}

function loadRepos() {
  const repos = new Map();
  for (const f of readdirSync(CONFIGS).filter((x) => x.endsWith('.json'))) {
    const id = f.slice(0, -5).replace('--', '/');
    repos.set(id, { library: id.startsWith('timm/') ? 'timm' : 'transformers', files: new Map([['config.json', readFileSync(join(CONFIGS, f))]]) });
  }
  if (existsSync(GOLDEN)) {
    for (const name of ['tiny-gpt2', 'tiny-llama']) {
      repos.set(`memfit-test/${name}`, goldenRepo(join(GOLDEN, name)));
      repos.set(`memfit-test/${name}-sharded`, goldenRepo(join(GOLDEN, name), { sharded: true }));
    }
    // the same weights, but the Hub redirects the safetensors file to a CDN on another origin
    const cdn = goldenRepo(join(GOLDEN, 'tiny-llama'));
    cdn.cdn = new Set(['model.safetensors']);
    repos.set('memfit-test/cdn-llama', cdn);
    // servers that ignore Range, or answer a range with 200 (and a Content-Range)
    repos.set('memfit-test/no-range', { ...goldenRepo(join(GOLDEN, 'tiny-gpt2')), rangeAs: 'whole' });
    repos.set('memfit-test/range-200', { ...goldenRepo(join(GOLDEN, 'tiny-gpt2')), rangeAs: 'status200' });
    // a model type no family knows, with safetensors weights: estimated from the headers
    const unknown = goldenRepo(join(GOLDEN, 'tiny-llama'));
    const config = JSON.parse(unknown.files.get('config.json').toString('utf8'));
    unknown.files.set('config.json', Buffer.from(JSON.stringify({ ...config, model_type: 'brand_new_arch', architectures: ['BrandNewArchForCausalLM'] })));
    repos.set('memfit-test/unknown-with-weights', unknown);
  }
  // tokenizer.json where the reference data has the model's real one (the page's prompt box)
  for (const [id, name] of [['gpt2', 'gpt2'], ['meta-llama/Meta-Llama-3-70B', 'llama3']]) {
    const tok = join(GOLDEN, 'tokenizers', name, 'tokenizer.json');
    if (repos.has(id) && existsSync(tok)) repos.get(id).files.set('tokenizer.json', readFileSync(tok));
  }
  const llama = readFileSync(join(CONFIGS, 'meta-llama--Llama-2-7b-hf.json'));
  repos.set('memfit-test/gated-llama', { library: 'transformers', gated: 'manual', files: new Map([['config.json', llama]]) });
  repos.set('memfit-test/no-config', { library: 'transformers', files: new Map() });
  repos.set('memfit-test/no-library', { library: null, files: new Map([['config.json', llama]]) });
  repos.set('memfit-test/diffusers-model', { library: 'diffusers', files: new Map([['config.json', llama]]) });
  repos.set('memfit-test/slow', { library: 'transformers', slowMs: 8000, files: new Map([['config.json', llama]]) });
  repos.set('memfit-test/unknown-arch', { library: 'transformers', files: new Map([['config.json', Buffer.from(JSON.stringify({ model_type: XSS, architectures: [XSS] }))]]) });
  const tinyLlama = join(GOLDEN, 'tiny-llama', 'config.json');
  for (const [id, repo] of kindRepos(existsSync(tinyLlama) ? JSON.parse(readFileSync(tinyLlama, 'utf8')) : null)) repos.set(id, repo);
  const gpt2 = JSON.parse(readFileSync(join(CONFIGS, 'gpt2.json'), 'utf8'));
  repos.set('memfit-test/xss-class', { library: 'transformers', files: new Map([['config.json', Buffer.from(JSON.stringify({ ...gpt2, architectures: [XSS], _name_or_path: XSS }))]]) });
  return repos;
}

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Headers': 'Authorization, Range, Content-Type',
  'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
  'Access-Control-Expose-Headers': 'X-Error-Code, X-Error-Message, Content-Range, Content-Length, Accept-Ranges, ETag',
  'Access-Control-Max-Age': '600',
};

/**
 * Serves a body, honouring a single "bytes=a-b" Range — unless `rangeAs` says to answer as a
 * server that ignores Range ('whole': 200 and everything) or one that sends the range with 200.
 */
function sendBytes(req, res, body, type, rangeAs = null) {
  const range = rangeAs === 'whole' ? null : /^bytes=(\d+)-(\d*)$/.exec(req.headers.range || '');
  const length = sizeOf(body);
  if (!range) {
    // a sparse file is read by its header only (a whole one would be gigabytes of zeros)
    if (body instanceof Sparse) return fail(res, 500, null, 'mock Hub: a sparse file is only served by Range');
    res.writeHead(200, { ...CORS, 'Content-Type': type, 'Content-Length': length, 'Accept-Ranges': 'bytes' });
    res.end(body);
    return;
  }
  const first = Number(range[1]);
  const last = Math.min(range[2] === '' ? length - 1 : Number(range[2]), length - 1);
  if (first >= length) {
    res.writeHead(416, { ...CORS, 'Content-Range': `bytes */${length}` });
    res.end();
    return;
  }
  res.writeHead(rangeAs === 'status200' ? 200 : 206, { ...CORS, 'Content-Type': type, 'Content-Length': last - first + 1, 'Content-Range': `bytes ${first}-${last}/${length}`, 'Accept-Ranges': 'bytes' });
  res.end(body instanceof Sparse ? body.slice(first, last) : body.subarray(first, last + 1));
}

/** @param {Buffer | Sparse} body */
const sizeOf = (body) => (body instanceof Sparse ? body.size : body.length);

function fail(res, status, code, message) {
  res.writeHead(status, { ...CORS, 'Content-Type': 'application/json', ...(code ? { 'X-Error-Code': code, 'X-Error-Message': message } : {}) });
  res.end(JSON.stringify({ error: message }));
}

function listen(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`));
  });
}

/**
 * Starts the Hub and its CDN. latencyMs: every model's answers wait that long (the benchmark's
 * stand-in for a real network's round trips; a repo's own slowMs wins). Returns {url, cdnUrl, log, cdnLog, repos, aborted, close}:
 * `aborted(pathPart)` resolves once a request whose path contains pathPart was closed by the
 * client before it was answered (the page cancelled its fetch).
 */
export async function startMockHub({ latencyMs = 0 } = {}) {
  const repos = loadRepos();
  const log = [];
  const cdnLog = [];
  const timers = new Set();
  let cdnUrl = '';
  /** @type {{part: string, resolve: () => void}[]} */
  const abortWaiters = [];
  /** @type {string[]} */
  const abortedPaths = [];
  const noteAbort = (/** @type {string} */ path) => {
    abortedPaths.push(path);
    for (const w of abortWaiters.splice(0)) {
      if (path.includes(w.part)) w.resolve();
      else abortWaiters.push(w);
    }
  };

  const hub = createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const path = decodeURIComponent(url.pathname);
    log.push({ method: req.method, path, auth: req.headers.authorization || null, range: req.headers.range || null, origin: req.headers.origin || null });
    res.on('close', () => { if (!res.writableEnded) noteAbort(path); });
    if (req.method === 'OPTIONS') { res.writeHead(204, CORS); res.end(); return; }
    const auth = req.headers.authorization || '';
    const token = auth.startsWith('Bearer ') ? auth.slice(7) : '';

    const api = /^\/api\/models\/(.+?)(?:\/revision\/([^/]+))?$/.exec(path);
    const resolve = /^\/(.+?)\/resolve\/([^/]+)\/(.+)$/.exec(path);
    const id = api ? api[1] : resolve ? resolve[1] : null;
    const repo = id ? repos.get(id) : null;
    if (!id) return fail(res, 404, null, 'not found');
    if (!repo) return fail(res, 404, 'RepoNotFound', 'Repository not found');
    const answer = () => {
      if (api) {
        const info = { id, modelId: id, private: false, gated: repo.gated || false, tags: [] };
        if (repo.library) info.library_name = repo.library;
        // the Hub lists every file; ?blobs=true adds each one's size (and LFS details)
        const blobs = url.searchParams.get('blobs') === 'true';
        info.siblings = [...repo.files].map(([f, body]) => (blobs ? { rfilename: f, size: sizeOf(body) } : { rfilename: f }));
        if (repo.safetensors) info.safetensors = { parameters: { F32: repo.safetensors.total }, total: repo.safetensors.total };
        res.writeHead(200, { ...CORS, 'Content-Type': 'application/json' });
        res.end(JSON.stringify(info));
        return;
      }
      const [, , revision, file] = resolve;
      if (revision !== 'main') return fail(res, 404, 'RevisionNotFound', 'Invalid rev id');
      if (repo.gated && token !== TOKEN) {
        return fail(res, token ? 403 : 401, 'GatedRepo', `Access to model ${id} is restricted. You must have access to it and be authenticated to access it.`);
      }
      const body = repo.files.get(file);
      if (!body) return fail(res, 404, 'EntryNotFound', `${file} does not exist`);
      if (repo.cdn && repo.cdn.has(file)) {
        res.writeHead(302, { ...CORS, Location: `${cdnUrl}/lfs/${encodeURIComponent(id)}/${file}` });
        res.end();
        return;
      }
      sendBytes(req, res, body, file.endsWith('.json') ? 'application/json' : 'application/octet-stream', repo.rangeAs);
    };
    const wait = repo.slowMs || latencyMs;
    if (wait) {
      const t = setTimeout(() => { timers.delete(t); if (!res.writableEnded) answer(); }, wait);
      timers.add(t);
    } else {
      answer();
    }
  });

  const cdn = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    cdnLog.push({ method: req.method, path, auth: req.headers.authorization || null, range: req.headers.range || null });
    if (req.method === 'OPTIONS') { res.writeHead(204, CORS); res.end(); return; }
    const m = /^\/lfs\/(.+)\/([^/]+)$/.exec(path);
    const body = m && repos.get(m[1])?.files.get(m[2]);
    if (!body) return fail(res, 404, null, 'no such object');
    sendBytes(req, res, body, 'application/octet-stream');
  });

  const url = await listen(hub);
  cdnUrl = await listen(cdn);
  return {
    url, cdnUrl, log, cdnLog, repos,
    aborted: (/** @type {string} */ part) => new Promise((resolve) => {
      if (abortedPaths.some((p) => p.includes(part))) resolve(undefined);
      else abortWaiters.push({ part, resolve: () => resolve(undefined) });
    }),
    close: async () => {
      for (const t of timers) clearTimeout(t);
      for (const s of [hub, cdn]) {
        s.closeAllConnections?.();
        await new Promise((r) => s.close(() => r()));
      }
    },
  };
}
