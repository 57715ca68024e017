// @ts-check
// The lazy client of the WASM worker (worker.js). Nothing is loaded until the first call; then
// one Worker holds one instance of the module (the main page and every <memfit-estimate> element
// share it) until the page has been idle for `idleMs`: the worker is then let go, with the
// module's memory, and the next call starts a new one (the module comes from the HTTP cache).
// `call(fn, ...args)` runs one function of core/include/memfit/api/api.h by its name — the
// worker answers for exactly the functions the module lists (api.h's one list, through
// supported()), so none is listed here — and resolves with the parsed JSON reply: a result, or {error: {code, message}} (docs/api.md).
// Only a failure of the module itself (it cannot load) rejects. The reply types below document
// what each function answers.

/** @typedef {{code: string, message: string}} ApiError */
/** @typedef {{error: ApiError}} ErrorReply */
/** @typedef {{name: string, dtype: string, shape: number[], file?: string}} CheckpointTensor */
/**
 * The model fields every request carries (docs/api.md, "Common request fields").
 * @typedef {object} ModelRequest
 * @property {object | string} [config]   config.json (object or text)
 * @property {string} [name]              model id (table title; timm variant)
 * @property {'' | 'transformers' | 'timm'} [library]
 * @property {'memfit' | 'accelerate'} [mode]
 * @property {string} [class]             model class override
 * @property {CheckpointTensor[]} [checkpoint]  exact tensors from safetensors headers
 * @property {'auto' | 'config' | 'checkpoint'} [source]
 */
/**
 * @typedef {object} ReportRow
 * @property {string} dtype
 * @property {number} largest_layer_bytes
 * @property {number} total_bytes
 * @property {number | null} training_bytes
 * @property {string} largest_layer
 * @property {string} total
 * @property {string} training
 * @property {Object<string, number>} [training_parts]
 */
/**
 * `memfit estimate --json`'s report plus the accelerate table text.
 * @typedef {object} EstimateReply
 * @property {string} name
 * @property {string} library
 * @property {string} model_type
 * @property {string} model_class
 * @property {string} mode
 * @property {string} [source]
 * @property {number} [stored_bytes]
 * @property {'safetensors' | 'pytorch_bin'} [checkpoint_format]  with source "checkpoint"
 * @property {number} parameters
 * @property {number} buffers_bytes
 * @property {ReportRow[]} rows
 * @property {string[]} largest_layer_names
 * @property {Object<string, number>} module_sizes   float32 bytes, "" is the whole model
 * @property {Object<string, number>} [module_repeats]  repeated modules (routed experts): the
 *   first copy's name → how many siblings it stands for; module_sizes lists that copy (and what
 *   lies below it) once, at one copy's size
 * @property {string[]} notes
 * @property {object} [comparison]
 * @property {string} table
 */
/**
 * @typedef {ModelRequest & {
 *   max_memory?: Object<string, string | number>, nodes?: string, link?: string, balance?: string,
 *   strategy?: string, dtype?: string,
 *   no_split?: string[], offload_buffers?: boolean, special_dtypes?: Object<string, string>,
 *   context?: number, batch?: number, overhead?: string | number, no_disk?: boolean}} PlanRequest
 */
/**
 * @typedef {object} PlanReply
 * @property {Object<string, number | string>} device_map   module → 0 | 1 | … | "cpu" | "disk"
 * @property {Object<string, number>} bytes_per_device
 * @property {Object<string, number>} max_memory             budget bytes after balancing
 * @property {number} streamed_bytes
 * @property {string[]} explain
 */
/**
 * A multi-host plan (request `nodes`): `memfit plan --nodes … --json`.
 * @typedef {object} PipelineReply
 * @property {{name: string, first_unit: string, last_unit: string, units: number, weights: number,
 *   kv_cache: number, step_s: number, micro_step_s: number, plan: PlanReply}[]} nodes
 * @property {number} bytes_per_boundary
 * @property {number} bytes_per_token
 * @property {number} batch
 * @property {number} micro_batches
 * @property {number} decode_tokens_per_s
 * @property {number} pipelined_tokens_per_s
 * @property {string[]} explain
 */
/**
 * @typedef {ModelRequest & {
 *   context?: number, batch?: number, kv_dtype?: string, engine?: string, dtype?: string,
 *   overhead?: string | number, vram?: string | number, gpu?: string,
 *   train?: {method?: string, rank?: number, targets?: string[], optimizer?: string,
 *            grad_checkpointing?: boolean}}} InferenceRequest
 */
/** @typedef {{inference?: object, training?: object, fit?: object}} InferenceReply */
/**
 * @typedef {object} SafetensorsHeader
 * @property {{name: string, dtype: string, shape: number[], data_offsets: number[]}[]} tensors
 * @property {Object<string, string>} metadata
 * @property {number} header_size
 * @property {number} data_size
 */

/** @param {any} reply @returns {reply is ErrorReply} */
export function isError(reply) {
  return !!reply && typeof reply === 'object' && !!reply.error && typeof reply.error === 'object';
}

/** How long an idle page keeps the worker (and the module's memory) by default. */
export const DEFAULT_IDLE_MS = 5 * 60 * 1000;

class Engine {
  constructor() {
    /** @type {Worker | null} */
    this.worker = null;
    this.nextId = 1;
    /** @type {Map<number, {resolve: (v: any) => void, reject: (e: Error) => void, fn: string}>} */
    this.pending = new Map();
    /** Milliseconds spent in WASM by the last call of each function. */
    /** @type {Object<string, number>} */
    this.lastMs = {};
    /** When the worker started, its module loaded (wasm_ready) and its first call came (ms on
     * this page's clock), once its first reply is in. */
    /** @type {Object<string, number>} */
    this.steps = {};
    /** Milliseconds without a call after which the worker is stopped (the page may set it). */
    this.idleMs = DEFAULT_IDLE_MS;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.idleTimer = undefined;
  }

  /**
   * The worker, started (loading the module) if there is none: a call starts it, and so may a
   * page that expects one soon.
   * @returns {Worker}
   */
  start() {
    if (this.worker) return this.worker;
    const worker = this.spawn();
    worker.onmessage = (event) => {
      const { id, text, ms, steps, failure } = event.data || {};
      if (steps) for (const [k, t] of Object.entries(steps)) this.steps[k] = t - performance.timeOrigin;
      const p = this.pending.get(id);
      if (!p) return;
      this.pending.delete(id);
      this.whenIdle();
      if (failure !== undefined) {
        p.reject(new Error(`memfit's WebAssembly module failed: ${failure}`));
        return;
      }
      this.lastMs[p.fn] = ms;
      try {
        p.resolve(JSON.parse(text));
      } catch (e) {
        p.reject(new Error(`memfit's WebAssembly module answered with invalid JSON (${p.fn})`));
      }
    };
    worker.onerror = (event) => {
      const err = new Error(`memfit's WebAssembly worker could not start: ${event.message || 'error'}`);
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
      this.stop();
    };
    this.worker = worker;
    this.whenIdle();
    return worker;
  }

  /** @returns {Worker} */
  spawn() {
    const url = new URL('./worker.js', import.meta.url);
    /** @type {Worker | undefined} */
    const booted = /** @type {any} */ (globalThis).memfitBootWorker;
    if (booted) {
      // started by boot.js, the same script (index.html, for a link with a model)
      delete /** @type {any} */ (globalThis).memfitBootWorker;
      return booted;
    }
    if (typeof location !== 'undefined' && url.origin !== location.origin) {
      // On another site's page (the embed widget), a worker script must be same-origin: start
      // a tiny module worker from a blob that imports ours (served with CORS).
      const src = `import ${JSON.stringify(url.href)};`;
      const blob = new Blob([src], { type: 'text/javascript' });
      return new Worker(URL.createObjectURL(blob), { type: 'module', name: 'memfit' });
    }
    return new Worker(url, { type: 'module', name: 'memfit' });
  }

  /** Once nothing is pending, stop the worker after idleMs (a new call cancels it). */
  whenIdle() {
    clearTimeout(this.idleTimer);
    if (this.pending.size === 0 && this.worker) this.idleTimer = setTimeout(() => this.stop(), this.idleMs);
  }

  /** Terminates the worker, freeing the module's memory; the next call starts another. */
  stop() {
    clearTimeout(this.idleTimer);
    this.worker?.terminate();
    this.worker = null;
  }

  /** True while a computation is running (or queued) in the worker; loading it does not count. */
  get busy() {
    return this.pending.size > 0;
  }

  /**
   * Stops whatever the worker is computing (a huge model can take seconds in core): the worker
   * is terminated, pending calls reject with an Error named 'AbortError', and the next call
   * starts a fresh one (the module comes from the HTTP cache).
   */
  restart() {
    if (!this.worker) return;
    this.stop();
    const err = new Error('cancelled');
    err.name = 'AbortError';
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /**
   * Runs api function `fn` (its api.h name) in the worker. A request object is sent as its JSON
   * text; strings, numbers and byte arrays (parse_safetensors_header's Uint8Array) as they are.
   * @param {string} fn
   * @param {...any} args
   * @returns {Promise<any>} the parsed reply (see the reply types above)
   */
  call(fn, ...args) {
    const worker = this.start();
    clearTimeout(this.idleTimer);
    const id = this.nextId++;
    const sent = args.map((a) => (a !== null && typeof a === 'object' && !ArrayBuffer.isView(a) ? JSON.stringify(a) : a));
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, fn });
      worker.postMessage({ id, fn, args: sent });
    });
  }
}

/** @type {Engine | null} */
let shared = null;

/** The page's one engine (created on first use; the worker starts on the first call). */
export function engine() {
  if (!shared) shared = new Engine();
  return shared;
}
