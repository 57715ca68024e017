// @ts-check
// The Hub, from the browser: /api/models/{id}, /{id}/resolve/{revision}/{file}, and safetensors
// headers by HTTP Range — what memfit's CLI reads, with the same error kinds. Rules:
// - the token goes in an Authorization header only to the endpoint's own origin; redirects
//   elsewhere (a CDN) never carry it: fetch drops Authorization on a cross-origin redirect, and
//   no cookies are ever sent (credentials: 'omit');
// - every request has a timeout and follows the caller's AbortSignal (a new input cancels);
// - a Range request whose server ignores Range stops reading after the bytes it needs.

/** Bytes asked for first: most safetensors headers fit. Same as the CLI. */
export const FIRST_RANGE = 64 * 1024;
/** safetensors' own cap on the header length. */
export const MAX_HEADER = 100_000_000;
const INDEX_NAME = 'model.safetensors.index.json';

/**
 * @typedef {'gated' | 'repo_not_found' | 'revision_not_found' | 'entry_not_found' | 'no_library'
 *   | 'unsupported_library' | 'no_weights' | 'network' | 'timeout' | 'http' | 'cancelled'
 *   | 'invalid_index'} HubErrorKind
 */

export class HubError extends Error {
  /** @param {HubErrorKind} kind @param {string} message @param {number} [status] */
  constructor(kind, message, status) {
    super(message);
    this.name = 'HubError';
    this.kind = kind;
    this.status = status;
  }
}

/** @param {string} url */
function originOf(url) {
  try { return new URL(url).origin; } catch { return ''; }
}

/** @param {string} s */
function pathPart(s) {
  return s.split('/').map(encodeURIComponent).join('/');
}

/**
 * The answer boot.js already asked for at this URL (a link's first two requests), once; null
 * when it asked for none, or its request failed (the caller asks again, and reports).
 * @param {string} url @returns {Promise<Response | null> | null}
 */
function takePrefetched(url) {
  /** @type {Map<string, Promise<Response | null>> | undefined} */
  const early = /** @type {any} */ (globalThis).memfitPrefetch;
  const answer = early?.get(url) ?? null;
  early?.delete(url);
  return answer;
}

/**
 * PROMISE, or an AbortError as soon as SIGNAL aborts (what fetch does with its signal).
 * @template T @param {Promise<T>} promise @param {AbortSignal} signal @returns {Promise<T>}
 */
function abortable(promise, signal) {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new DOMException('aborted', 'AbortError'));
    if (signal.aborted) { onAbort(); return; }
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export class HubClient {
  /**
   * @param {object} options
   * @param {string} options.endpoint    e.g. https://huggingface.co (no trailing slash needed)
   * @param {string} [options.token]
   * @param {string} [options.revision]
   * @param {number} [options.timeoutMs]
   * @param {AbortSignal} [options.signal]
   */
  constructor({ endpoint, token = '', revision = 'main', timeoutMs = 20000, signal }) {
    this.endpoint = endpoint.replace(/\/+$/, '');
    this.origin = originOf(this.endpoint);
    this.token = token;
    this.revision = revision || 'main';
    this.timeoutMs = timeoutMs;
    this.signal = signal;
    /** Every URL this client asked for, in order (for the page's "requests" detail). */
    /** @type {string[]} */
    this.requested = [];
  }

  /**
   * One GET. Resolves with the Response whatever its status; rejects with HubError for network
   * failures, timeouts and cancellation.
   * @param {string} url
   * @param {{range?: string}} [opts]
   * @returns {Promise<{response: Response, done: () => void}>}
   */
  async get(url, { range } = {}) {
    /** @type {Object<string, string>} */
    const headers = {};
    if (this.token && originOf(url) === this.origin) headers.Authorization = `Bearer ${this.token}`;
    if (range) headers.Range = range;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; controller.abort(); }, this.timeoutMs);
    const onAbort = () => controller.abort();
    if (this.signal) {
      if (this.signal.aborted) controller.abort();
      else this.signal.addEventListener('abort', onAbort, { once: true });
    }
    const done = () => {
      clearTimeout(timer);
      this.signal?.removeEventListener('abort', onAbort);
    };
    this.requested.push(url);
    try {
      const early = !range && !headers.Authorization ? takePrefetched(url) : null;
      const response = (early && await abortable(early, controller.signal)) || await fetch(url, {
        headers, signal: controller.signal, credentials: 'omit', referrerPolicy: 'no-referrer',
        cache: range ? 'no-store' : 'default', redirect: 'follow', mode: 'cors',
      });
      return { response, done };
    } catch (e) {
      done();
      if (timedOut) {
        throw new HubError('timeout', `${this.origin} did not answer within ${Math.round(this.timeoutMs / 1000)} s (${shortUrl(url)})`);
      }
      if (this.signal?.aborted) throw new HubError('cancelled', 'cancelled');
      throw new HubError('network', `cannot reach ${this.origin}: the network is down, the address is wrong, or the server does not allow requests from this page (CORS)`);
    }
  }

  /**
   * The error a non-OK answer means — the CLI's rules (native/hub_client.cpp raise_for).
   * @param {Response} r @param {string} what @param {string} repo
   */
  errorFor(r, what, repo) {
    const code = r.headers.get('X-Error-Code') || '';
    const s = r.status;
    if (code === 'GatedRepo' || (s === 403 && !code)) {
      return new HubError('gated', `${what}: access to model “${repo}” is restricted (gated repo, HTTP ${s}). ` +
        `Accept its conditions on the Hub, then paste an access token with access under “Access token”.`, s);
    }
    if (code === 'RepoNotFound' || (s === 401 && !code) || (s === 404 && !code && what.includes('api/models'))) {
      return new HubError('repo_not_found', `model “${repo}” does not exist on ${this.endpoint} (HTTP ${s}). ` +
        `If it is private, paste an access token with access under “Access token”.`, s);
    }
    if (code === 'RevisionNotFound') {
      return new HubError('revision_not_found', `model “${repo}” has no revision “${this.revision}” (HTTP ${s})`, s);
    }
    if (code === 'EntryNotFound' || s === 404) {
      return new HubError('entry_not_found', `${what}: model “${repo}” has no such file at revision “${this.revision}” (HTTP ${s})`, s);
    }
    return new HubError('http', `${what}: unexpected HTTP ${s} from ${this.origin}`, s);
  }

  /** @param {string} url @param {string} what @param {string} repo */
  async text(url, what, repo) {
    const { response, done } = await this.get(url);
    try {
      if (!response.ok) throw this.errorFor(response, what, repo);
      return await response.text();
    } catch (e) {
      if (e instanceof HubError) throw e;
      throw new HubError(this.signal?.aborted ? 'cancelled' : 'network', `${what}: the connection broke while reading`);
    } finally {
      done();
    }
  }

  /** /api/models/{id}?blobs=true as an object: its siblings carry their sizes. @param {string} repo */
  async modelInfo(repo) {
    let url = `${this.endpoint}/api/models/${pathPart(repo)}`;
    if (this.revision !== 'main') url += `/revision/${encodeURIComponent(this.revision)}`;
    url += '?blobs=true';
    const what = `fetching api/models/${repo}`;
    const text = await this.text(url, what, repo);
    let info;
    try { info = JSON.parse(text); } catch { info = null; }
    if (!info || typeof info !== 'object' || Array.isArray(info)) {
      throw new HubError('http', `${what}: the Hub answered with something that is not a JSON object`);
    }
    return info;
  }

  /** @param {string} repo @param {string} file */
  fileUrl(repo, file) {
    return `${this.endpoint}/${pathPart(repo)}/resolve/${encodeURIComponent(this.revision)}/${pathPart(file)}`;
  }

  /** A repo file as text. @param {string} repo @param {string} file */
  file(repo, file) {
    return this.text(this.fileUrl(repo, file), `fetching ${file} of “${repo}”`, repo);
  }

  /**
   * Bytes [first, last] of a repo file. A server that ignores Range answers 200 with the whole
   * file: only the bytes needed are read, then the download is cancelled.
   * @param {string} repo @param {string} file @param {number} first @param {number} last
   * @returns {Promise<{bytes: Uint8Array, total: number | null}>}
   */
  async range(repo, file, first, last) {
    const { response, done } = await this.get(this.fileUrl(repo, file), { range: `bytes=${first}-${last}` });
    try {
      if (response.status === 416) return { bytes: new Uint8Array(0), total: totalOf(response) };
      if (response.status !== 206 && response.status !== 200) throw this.errorFor(response, `reading ${file}`, repo);
      // A 200 that carries a Content-Range is the range asked with the wrong status (cpp-httplib
      // answers so): read as the 206 it is, as the CLI does. A plain 200 is the whole file.
      if (response.status === 206 || response.headers.get('Content-Range')) {
        const bytes = await readAtMost(response, last - first + 2);
        if (bytes.length > last - first + 1) {
          throw new HubError('http', `reading ${file}: asked for ${last - first + 1} bytes, the server sent more`);
        }
        return { bytes, total: totalOf(response) };
      }
      const length = Number(response.headers.get('Content-Length'));
      const all = await readAtMost(response, last + 1);
      return { bytes: all.subarray(first), total: Number.isFinite(length) && length > 0 ? length : null };
    } catch (e) {
      if (e instanceof HubError) throw e;
      throw new HubError(this.signal?.aborted ? 'cancelled' : 'network', `reading ${file}: the connection broke`);
    } finally {
      done();
    }
  }

  /**
   * The first 8 + N bytes of a safetensors file (N: its header length), as the CLI reads them:
   * one request of 64 KiB, and one more for the rest of a bigger header.
   * @param {string} repo @param {string} file
   * @returns {Promise<{bytes: Uint8Array, total: number | null}>}
   */
  async safetensorsHeader(repo, file) {
    const first = await this.range(repo, file, 0, FIRST_RANGE - 1);
    const n = headerLength(first.bytes);
    if (n === null || n > MAX_HEADER) return first;  // too small / too large: core says why
    if (first.bytes.length >= 8 + n) return { bytes: first.bytes.subarray(0, 8 + n), total: first.total };
    if (first.total !== null && 8 + n > first.total) return first;  // truncated: core says so
    if (first.bytes.length < FIRST_RANGE) return first;  // the file ended early
    const rest = await this.range(repo, file, first.bytes.length, 8 + n - 1);
    const bytes = new Uint8Array(first.bytes.length + rest.bytes.length);
    bytes.set(first.bytes);
    bytes.set(rest.bytes, first.bytes.length);
    return { bytes, total: first.total };
  }

  /**
   * The repo's safetensors checkpoint: model.safetensors.index.json and its shards, else
   * model.safetensors. `parse` turns a header's bytes into tensors (the WASM parser).
   * @param {string} repo
   * @param {(bytes: Uint8Array, total: number, file: string) => Promise<{name: string, dtype: string, shape: number[]}[]>} parse
   * @returns {Promise<{files: string[], tensors: {name: string, dtype: string, shape: number[], file: string}[], indexTotal: number | null, bytesRead: number}>}
   */
  async checkpoint(repo, parse) {
    let indexText = null;
    try {
      indexText = await this.file(repo, INDEX_NAME);
    } catch (e) {
      if (!(e instanceof HubError) || e.kind !== 'entry_not_found') throw e;
    }
    let bytesRead = 0;
    /** @param {string} file */
    const readOne = async (file) => {
      const h = await this.safetensorsHeader(repo, file);
      bytesRead += h.bytes.length;
      const tensors = await parse(h.bytes, h.total ?? -1, file);
      return tensors.map((t) => ({ name: t.name, dtype: t.dtype, shape: t.shape, file }));
    };
    if (indexText === null) {
      try {
        const tensors = await readOne('model.safetensors');
        return { files: ['model.safetensors'], tensors, indexTotal: null, bytesRead };
      } catch (e) {
        if (e instanceof HubError && e.kind === 'entry_not_found') {
          throw new HubError('no_weights', `model “${repo}” has no safetensors weights (${INDEX_NAME} or model.safetensors)`);
        }
        throw e;
      }
    }
    const index = parseIndex(indexText, `${repo}/${INDEX_NAME}`);
    const perShard = await mapLimit(index.shards, 4, readOne);
    const tensors = perShard.flat();
    checkIndex(index, tensors, `${repo}/${INDEX_NAME}`);
    return { files: index.shards, tensors, indexTotal: index.totalSize, bytesRead };
  }
}

/**
 * An index's weight map and shards (first-appearance order, as core's parse_index).
 * @param {string} text @param {string} source
 */
export function parseIndex(text, source) {
  let j;
  try { j = JSON.parse(text); } catch { j = null; }
  const map = j && typeof j === 'object' ? j.weight_map : null;
  if (!map || typeof map !== 'object' || Array.isArray(map)) {
    throw new HubError('invalid_index', `${source}: not a checkpoint index (no "weight_map" object)`);
  }
  /** @type {string[]} */
  const shards = [];
  const seen = new Set();
  for (const [name, file] of Object.entries(map)) {
    if (typeof file !== 'string' || !file || file.startsWith('/') || file.includes('\\') ||
        file.split('/').includes('..')) {
      throw new HubError('invalid_index', `${source}: tensor “${name}” names an invalid shard file`);
    }
    if (!seen.has(file)) { seen.add(file); shards.push(file); }
  }
  const total = j.metadata && typeof j.metadata.total_size === 'number' ? j.metadata.total_size : null;
  return { weightMap: /** @type {Object<string, string>} */ (map), shards, totalSize: total };
}

/**
 * Every tensor of the weight map is in the shard it names, and every shard tensor is listed.
 * @param {{weightMap: Object<string, string>}} index
 * @param {{name: string, file: string}[]} tensors @param {string} source
 */
function checkIndex(index, tensors, source) {
  const where = new Map(tensors.map((t) => [t.name, t.file]));
  for (const [name, file] of Object.entries(index.weightMap)) {
    if (where.get(name) !== file) {
      throw new HubError('invalid_index', `${source}: weight_map puts “${name}” in ${file}, which does not hold it`);
    }
  }
  for (const t of tensors) {
    if (!(t.name in index.weightMap)) {
      throw new HubError('invalid_index', `${source}: ${t.file} holds “${t.name}”, which weight_map does not list`);
    }
  }
}

/** The u64 little-endian length prefix, or null when fewer than 8 bytes. @param {Uint8Array} b */
export function headerLength(b) {
  if (b.length < 8) return null;
  const v = new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true);
  return v > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(v);
}

/** "bytes 0-99/12345" → 12345. @param {Response} r */
function totalOf(r) {
  const m = /\/(\d+)\s*$/.exec(r.headers.get('Content-Range') || '');
  return m ? Number(m[1]) : null;
}

/** Reads at most `limit` bytes of a body, then cancels the rest. @param {Response} r @param {number} limit */
async function readAtMost(r, limit) {
  if (!r.body) return new Uint8Array(await r.arrayBuffer()).subarray(0, limit);
  const reader = r.body.getReader();
  const chunks = [];
  let size = 0;
  while (size < limit) {
    const { value, done } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
  }
  if (size >= limit) reader.cancel().catch(() => {});
  const out = new Uint8Array(Math.min(size, limit));
  let at = 0;
  for (const c of chunks) {
    const take = Math.min(c.length, out.length - at);
    out.set(c.subarray(0, take), at);
    at += take;
    if (at >= out.length) break;
  }
  return out;
}

/**
 * @template T, R
 * @param {T[]} items @param {number} limit @param {(item: T) => Promise<R>} fn
 * @returns {Promise<R[]>}
 */
async function mapLimit(items, limit, fn) {
  const out = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  });
  await Promise.all(workers);
  return out;
}

/** @param {string} url */
function shortUrl(url) {
  try { const u = new URL(url); return u.pathname; } catch { return url; }
}
