// @ts-check
// A Hub repo that is not one transformers/timm model (a GGUF repo, a diffusers pipeline,
// sentence-transformers, a PEFT adapter and its base), answered by core's `repo` api function
// (docs/api.md, core/include/memfit/repo/repo_kind.h) in rounds: the module says which files it
// needs, this reads them from the Hub (texts whole, safetensors headers and GGUF leading bytes by
// HTTP Range: as many as the need's `bytes`) and asks again, until it answers with a report. Loaded only for such a repo; the
// worker sends the call to memfit-all.wasm (the first module answers not_in_this_module).
// Shared by the page (model.js, estimate.js) and the widget (embed.js).

import { engine, isError } from './api.js';
import { FIRST_RANGE, HubError } from './hub.js';
import { ModelError } from './model.js';

/** Rounds of needs: core asks in at most kMaxRepoSteps, plus a GGUF header's reads (1 MiB
 * doubling to core's cap of 256 MiB). */
const MAX_ROUNDS = 16;

/**
 * @typedef {object} RepoRequest   the `repo` request (docs/api.md) — the files read so far
 * @property {string} [kind]
 * @property {string} repo
 * @property {string} library
 * @property {string[]} listing
 * @property {Object<string, number>} sizes
 * @property {Object<string, string>} texts
 * @property {Object<string, string>} headers
 * @property {Object<string, string>} binaries  file_key → base64 of the file's leading bytes
 * @property {{gpu_bytes?: number, context?: number, dtype?: string}} [options]
 */
/**
 * @typedef {object} RepoReport   report_json (docs/api.md)
 * @property {string} kind
 * @property {string} title
 * @property {{title: string, columns: string[], rows: string[][]}[]} tables
 * @property {string[]} lines
 * @property {string[]} notes
 * @property {any} fields
 */
/** @typedef {{kind: string, request: RepoRequest, report: RepoReport | null}} RepoAnswer */
/** @typedef {{repo: string, path: string, form: string, optional: boolean, bytes?: number}} Need */

/**
 * The first request: the listing of /api/models/{id}?blobs=true (siblings with sizes).
 * @param {string} id @param {any} info @param {string} library
 * @returns {RepoRequest}
 */
export function listingRequest(id, info, library) {
  /** @type {RepoRequest} */
  const req = { repo: id, library, listing: [], sizes: {}, texts: {}, headers: {}, binaries: {} };
  for (const s of Array.isArray(info.siblings) ? info.siblings : []) {
    if (!s || typeof s.rfilename !== 'string') continue;
    req.listing.push(s.rfilename);
    if (typeof s.size === 'number' && s.size >= 0) req.sizes[s.rfilename] = s.size;
  }
  return req;
}

/** @param {Uint8Array} bytes */
function base64(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/** The GGUF bytes read so far, per request and key (a larger read fetches only the rest). */
/** @type {WeakMap<RepoRequest, Map<string, Uint8Array>>} */
const held = new WeakMap();

/** A need's file_key (repo_kind.h file_key): "path", or "ORG/NAME:path" for another repo. @param {{repo: string, path: string}} n */
const keyOf = (n) => (n.repo ? `${n.repo}:${n.path}` : n.path);

/**
 * Reads one need into the request. An optional file that is absent is recorded as an empty text
 * (as the CLI does: core then falls back).
 * @param {import('./hub.js').HubClient} hub @param {RepoRequest} req
 * @param {Need} need
 */
async function readNeed(hub, req, need) {
  const key = keyOf(need);
  const repo = need.repo || req.repo;
  try {
    if (need.form === 'safetensors_header') {
      const h = await hub.safetensorsHeader(repo, need.path);
      // core takes the header's JSON text (the N bytes after the 8-byte length) and the file size
      req.headers[key] = new TextDecoder().decode(h.bytes.subarray(8));
      if (h.total !== null && req.sizes[key] === undefined) req.sizes[key] = h.total;
    } else if (need.form === 'gguf_header') {
      // as many leading bytes as core asks (it asks again, for twice as many, while the header
      // runs past them): only the bytes not yet held are fetched
      const want = need.bytes && need.bytes > 0 ? need.bytes : FIRST_RANGE;
      const had = held.get(req)?.get(key) || new Uint8Array(0);
      const r = had.length < want ? await hub.range(repo, need.path, had.length, want - 1) : { bytes: new Uint8Array(0), total: null };
      const bytes = new Uint8Array(had.length + r.bytes.length);
      bytes.set(had);
      bytes.set(r.bytes, had.length);
      if (!held.has(req)) held.set(req, new Map());
      held.get(req)?.set(key, bytes);
      req.binaries[key] = base64(bytes);
      if (r.total !== null && req.sizes[key] === undefined) req.sizes[key] = r.total;
    } else {
      req.texts[key] = await hub.file(repo, need.path);
    }
  } catch (e) {
    if (need.optional && e instanceof HubError && e.kind === 'entry_not_found') {
      req.texts[key] = '';
      return;
    }
    throw e;
  }
}

/**
 * Asks the module until it answers with a report (or says the repo is one model: kind "model").
 * Errors: ModelError with core's code (or the Hub's kind).
 * @param {import('./hub.js').HubClient} hub @param {RepoRequest} req
 * @param {(text: string) => void} [progress]
 * @returns {Promise<RepoAnswer>}
 */
export async function askRepo(hub, req, progress) {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const reply = await engine().call('repo', req);
    if (isError(reply)) throw new ModelError(reply.error.code, reply.error.message);
    req.kind = reply.kind;
    if (reply.kind === 'model' || reply.report) return { kind: reply.kind, request: req, report: reply.report || null };
    /** @type {Need[]} */
    const needs = reply.needs || [];
    if (!needs.length) throw new ModelError('internal', `${req.repo}: the module asked for nothing and answered nothing`);
    progress?.(`Reading ${needs.length} file${needs.length === 1 ? '' : 's'} of ${req.repo} (${reply.kind})…`);
    await Promise.all(needs.map((n) => readNeed(hub, req, n)));
  }
  throw new ModelError('internal', `${req.repo}: still needs files after ${MAX_ROUNDS} rounds`);
}

/**
 * The report again for other options (GPU, context): the files are already read.
 * @param {RepoRequest} req @param {{gpu_bytes?: number, context?: number}} options
 * @returns {Promise<RepoReport>}
 */
export async function reportWith(req, options) {
  const reply = await engine().call('repo', { ...req, options });
  if (isError(reply)) throw new ModelError(reply.error.code, reply.error.message);
  if (!reply.report) throw new ModelError('internal', `${req.repo}: the module asked for more files`);
  return reply.report;
}
