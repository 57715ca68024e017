// @ts-check
// Where a model comes from — the Hub, the bundled catalog, or files the visitor dropped — and
// the estimate request it makes. Shared by the page (app.js) and the widget (embed.js).

import { engine, isError } from './api.js';
import { HubClient, HubError } from './hub.js';
import { catalog } from './catalog.js';
import { parseModelInput } from './state.js';

/**
 * @typedef {object} ModelSource
 * @property {string} name
 * @property {'' | 'transformers' | 'timm'} library
 * @property {object | string | null} config
 * @property {{name: string, dtype: string, shape: number[], file: string}[] | null} checkpoint
 * @property {'hub' | 'catalog' | 'local'} origin
 * @property {any} [info]              /api/models/{id}
 * @property {string[]} notes          what the visitor should know about where it came from
 * @property {{files: number, bytesRead: number, indexTotal: number | null} | null} exact
 * @property {import('./repo.js').RepoAnswer} [repo]  a repo of another kind: its files and report
 */

/** A failure the page explains: a kind (for the title), a message, and sometimes a hint. */
export class ModelError extends Error {
  /** @param {string} kind @param {string} message */
  constructor(kind, message) {
    super(message);
    this.name = 'ModelError';
    this.kind = kind;
  }
}

/**
 * Parses a safetensors header with the WASM parser; a malformed one throws ModelError.
 * @param {Uint8Array} bytes @param {number} total @param {string} file
 */
export async function parseHeader(bytes, total, file) {
  const reply = await engine().call('parse_safetensors_header', bytes, total);
  if (isError(reply)) throw new ModelError(reply.error.code, `${file}: ${reply.error.message}`);
  return reply.tensors;
}

/**
 * A model from the Hub (or, with no network, from the catalog).
 * @param {object} o
 * @param {string} o.input         model id or Hub URL
 * @param {string} [o.revision]
 * @param {'auto' | 'transformers' | 'timm'} [o.library]
 * @param {string} o.endpoint
 * @param {string} [o.token]
 * @param {boolean} [o.exact]      read the safetensors headers too
 * @param {boolean} [o.offline]    the catalog only
 * @param {number} [o.timeoutMs]
 * @param {AbortSignal} [o.signal]
 * @param {(text: string) => void} [o.progress]
 * @param {{gpu_bytes?: number, context?: number}} [o.repoOptions]  a repo of another kind: the GPU and context
 * @returns {Promise<ModelSource>}
 */
export async function fromHub(o) {
  const parsed = parseModelInput(o.input);
  if (!parsed) {
    throw new ModelError('input', `“${o.input.trim()}” is not a model id (org/name) or a Hugging Face model URL`);
  }
  const id = parsed.id;
  const revision = parsed.revision || o.revision || 'main';
  const wanted = o.library && o.library !== 'auto' ? o.library : '';
  // the catalog is read only when it is needed (offline, or the Hub cannot be reached): a Hub
  // model's first result never waits for it
  const fromCatalog = async (/** @type {string} */ why) => {
    const entry = (await catalog()).get(id.toLowerCase());
    if (!entry) return null;
    if (o.exact) throw new ModelError('network', `${why}; the exact mode needs the Hub (the catalog has configs only)`);
    return /** @type {ModelSource} */ ({
      name: entry.id, library: wanted || entry.library, config: entry.config, checkpoint: null,
      origin: 'catalog', notes: [`${why}: the config comes from memfit's bundled catalog`], exact: null,
    });
  };
  if (o.offline) {
    const hit = await fromCatalog('offline');
    if (hit) return hit;
    throw new ModelError('offline', `“${id}” is not in the bundled catalog, and offline mode is on (turn it off to ask the Hub)`);
  }
  const hub = new HubClient({ endpoint: o.endpoint, token: o.token, revision, timeoutMs: o.timeoutMs, signal: o.signal });
  try {
    o.progress?.(`Asking ${hub.origin} about ${id}…`);
    // config.json is asked for at the same time as the model's info (one round trip, not two);
    // its answer is used only once the info says the model can be estimated
    const configAnswer = hub.file(id, 'config.json').then((text) => ({ text }), (error) => ({ error }));
    const info = await hub.modelInfo(id);
    const hubLibrary = typeof info.library_name === 'string' ? info.library_name : '';
    let library = wanted || hubLibrary;
    const answer = await configAnswer;
    // A repo of another kind (GGUF files, a diffusers pipeline, sentence-transformers, a PEFT
    // adapter): core's repo() tells from the listing, and says which files it needs. A
    // transformers/timm repo is one model, as before, without asking it (that would load the
    // second module for every model) — unless a transformers repo has no config.json (GGUF
    // repos often say "transformers"; a timm model can be built from its name alone).
    const noConfig = 'error' in answer && answer.error instanceof HubError && answer.error.kind === 'entry_not_found';
    if (!wanted && ((noConfig && library !== 'timm') || (library !== 'transformers' && library !== 'timm'))) {
      const { askRepo, listingRequest } = await import('./repo.js');
      const req = listingRequest(id, info, hubLibrary);
      req.options = o.repoOptions || {};
      o.progress?.(`Asking memfit what kind of repo ${id} is…`);
      const repo = await askRepo(hub, req, o.progress);
      if (repo.kind !== 'model') {
        return {
          name: id, library: '', config: null, checkpoint: null, origin: 'hub', info, repo,
          notes: revision !== 'main' ? [`revision ${revision}`] : [], exact: null,
        };
      }
    }
    if (!library) {
      throw new ModelError('no_library', `model “${id}” has no library metadata on the Hub: choose transformers or timm under “Library”`);
    }
    if (library !== 'transformers' && library !== 'timm') {
      throw new ModelError('unsupported_library', `library “${library}” is not supported yet (model “${id}”); supported: timm, transformers`);
    }
    o.progress?.(`Fetching config.json of ${id}…`);
    /** @type {string | null} */
    let config = null;
    if ('text' in answer) {
      config = answer.text;
    } else if (!(answer.error instanceof HubError && answer.error.kind === 'entry_not_found' && library === 'timm')) {
      // a timm model can be built from its name alone (as timm.create_model does)
      throw answer.error;
    }
    /** @type {ModelSource} */
    const source = {
      name: id, library: /** @type {any} */ (library), config, checkpoint: null, origin: 'hub', info,
      notes: revision !== 'main' ? [`revision ${revision}`] : [], exact: null,
    };
    if (o.exact) {
      o.progress?.(`Reading the safetensors headers of ${id} (HTTP Range)…`);
      const ck = await hub.checkpoint(id, parseHeader);
      source.checkpoint = ck.tensors;
      source.exact = { files: ck.files.length, bytesRead: ck.bytesRead, indexTotal: ck.indexTotal };
    }
    return source;
  } catch (e) {
    if (e instanceof HubError && (e.kind === 'network' || e.kind === 'timeout')) {
      const hit = await fromCatalog(e.kind === 'timeout' ? 'the Hub timed out' : 'the Hub is unreachable');
      if (hit) return hit;
    }
    if (e instanceof HubError) throw new ModelError(e.kind, e.message);
    throw e;
  }
}

/**
 * The estimate request for a model and the page's choices (docs/api.md).
 * @param {ModelSource} source
 * @param {{mode: string, dtypes: string[] | null, cls?: string}} choice
 */
export function estimateRequest(source, choice) {
  /** @type {any} */
  const req = { name: source.name, library: source.library, mode: choice.mode };
  if (source.config !== null && source.config !== undefined) req.config = source.config;
  if (choice.dtypes) req.dtypes = choice.dtypes;
  if (choice.cls) req.class = choice.cls;
  if (source.checkpoint && choice.mode !== 'accelerate') {
    req.checkpoint = source.checkpoint;
    req.source = 'checkpoint';
  }
  return req;
}

/** Titles for error kinds (Hub kinds, core's codes, the page's own). @param {string} kind */
export function errorTitle(kind) {
  const titles = /** @type {Object<string, string>} */ ({
    input: 'Not a model id', gated: 'Gated model', repo_not_found: 'Model not found',
    entry_not_found: 'No config.json', revision_not_found: 'No such revision',
    no_library: 'Library unknown', unsupported_library: 'Library not supported',
    no_weights: 'No safetensors weights', invalid_index: 'Invalid checkpoint index',
    network: 'Network or CORS error', timeout: 'Timed out', http: 'Unexpected answer from the Hub',
    offline: 'Not in the catalog', unknown_model_type: 'Unsupported architecture',
    unknown_class: 'Unsupported model class', invalid_json: 'Invalid config.json',
    missing_key: 'Invalid config.json', wrong_type: 'Invalid config.json',
    invalid_value: 'Invalid config.json', overflow: 'Too big to compute',
    invalid_argument: 'Invalid request', internal: 'Internal error', file: 'Cannot read the file',
  });
  if (titles[kind]) return titles[kind];
  if (kind.startsWith('safetensors_')) return 'Invalid safetensors header';
  if (kind.startsWith('index_')) return 'Invalid checkpoint index';
  return 'Error';
}
