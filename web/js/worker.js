// @ts-check
// The Web Worker that owns the WASM modules: the first one (memfit.wasm: core with the families
// most model pages need) is loaded as soon as the worker starts (it is only started for a call);
// every call is one synchronous api.h function run off the main thread. A reply that says the
// model's type is unknown, or that asks for what the first module leaves out (plans over several
// hosts), sends the worker for the second module (memfit-all.wasm: every family, everything)
// once, and the call is made again there; from then on that module answers everything (it is a
// superset). So a first visit downloads only the first module. api.js terminates the worker when
// the page is idle, which frees the modules' memory. `tokenize` (a prompt's tokens) is answered
// by a third module, memfit-text.wasm (the tokenizer over core's portable text backend), loaded
// the first time a prompt is counted.
// Messages (see api.js):
//   in:  {id, fn, args}          fn: one of the module's api functions (api.h's list)
//        {memfitModule}          the first module's .wasm compiled by the page (boot.js), or null
//   out: {id, text, ms, steps?}  text: the api's JSON reply; ms: time spent in WASM; steps (first
//                                reply only): when each step of the worker's start-up was done,
//                                ms since the epoch (the page's timeline: estimate.js)
//        {id, failure}           a module itself could not load or threw (not an api error)

// The first module's JS glue, bundled into this file by web/tools/bundle.mjs (the site's js/worker.js
// is that bundle): as a second request, made once this script had run, it was the last step of a
// first visit's worker start-up (~90 ms of it on a busy machine), and a page call that came
// first compiled what the warm-ups below would have.
import createFirst from '../wasm/memfit.mjs';

/** @typedef {{wasm: any, all?: boolean}} Loaded */

/** Whether the module binds `fn`: embind puts each of api.h's functions on it (wasm/bindings.cpp).
 * Asking supported() for their list instead ran ~230 functions — compiled first — before the
 * module counted as ready. @param {any} wasm @param {unknown} fn */
const binds = (wasm, fn) => typeof fn === 'string' && Object.hasOwn(wasm, fn) && typeof wasm[fn] === 'function';

/** The .wasm at `url`, instantiated: compiled as it streams in (and V8 caches the compiled code
 * with the HTTP response, for the next visit), or from its bytes when the server sends another
 * MIME type than application/wasm.
 * @param {Promise<Response>} response @param {string} url @param {any} imports */
function instantiateFetched(response, url, imports) {
  return response.then((r) => {
    if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
    return WebAssembly.instantiateStreaming(r, imports).catch(() => fetch(url, { credentials: 'same-origin' })
      .then((again) => again.arrayBuffer()).then((bytes) => WebAssembly.instantiate(bytes, imports)));
  });
}

/**
 * A module: its JS glue (FILE) and its .wasm, fetched at once — the glue would start fetching
 * the .wasm only once it had loaded and run, one request later on a first visit's critical path.
 * `compiled`: the .wasm as the page compiled it (boot.js), null when it could not. `create`: the
 * glue's factory when it is already here (the first module's), else FILE is imported.
 * @param {string} file @param {Promise<WebAssembly.Module | null>} [compiled] @param {Function} [create]
 * @returns {Promise<Loaded>}
 */
function load(file, compiled, create) {
  const url = new URL(`../wasm/${file}`, import.meta.url).href;
  const wasmUrl = url.replace(/\.mjs$/, '.wasm');
  const fetchWasm = () => {
    const response = fetch(wasmUrl, { credentials: 'same-origin' });
    response.catch(() => {});  // reported by the instantiation
    return response;
  };
  const response = compiled ? null : fetchWasm();  // at once, beside the glue
  return (create ? Promise.resolve(create) : import(url).then((m) => m.default)).then((factory) => new Promise((resolve, reject) => {
    factory({
      /** Emscripten's hook (wasm/CMakeLists.txt, INCOMING_MODULE_JS_API). @param {any} imports @param {Function} done */
      instantiateWasm(imports, done) {
        (compiled || Promise.resolve(null)).then((module) => (module
          ? WebAssembly.instantiate(module, imports).then((instance) => ({ instance, module }))
          : instantiateFetched(response || fetchWasm(), wasmUrl, imports)))
          .then((r) => done(r.instance, r.module), reject);
        return {};
      },
    }).then(resolve, reject);
  })).then((wasm) => ({ wasm }));
}

// boot.js names the worker it starts so: the first module's .wasm then comes from the page, as
// {memfitModule} (the first message, before any call).
const PAGE_COMPILES = 'memfit:page-compiles';
/** @type {(module: WebAssembly.Module | null) => void} */
let fromPage = () => {};
/** @type {Promise<WebAssembly.Module | null> | undefined} */
const pageModule = self.name === PAGE_COMPILES ? new Promise((resolve) => { fromPage = resolve; }) : undefined;

/** @type {Promise<Loaded> | null} */
let first = null;
/** @type {Promise<Loaded> | null} */
let all = null;
const now = () => performance.timeOrigin + performance.now();
/** When the worker started, its module loaded, and its first call came. @type {Object<string, number> | undefined} */
let steps = { worker_start: now() };

// Tiny configs, a dense one and a mixture of experts: one estimate of each runs the code most
// estimates run. With the kinds of fields real configs carry (floats, null, booleans, ids), so
// their parsing is compiled too.
const LLAMA = {
  model_type: 'llama', architectures: ['LlamaForCausalLM'], vocab_size: 256, hidden_size: 64,
  intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2,
  torch_dtype: 'bfloat16', hidden_act: 'silu', max_position_embeddings: 4096, rms_norm_eps: 1e-5,
  rope_theta: 500000.0, rope_scaling: null, tie_word_embeddings: false, attention_bias: false,
  bos_token_id: 1, eos_token_id: 2, initializer_range: 0.02,
};
// The mixture of experts first: it runs the attention and the rest a dense model runs too, so a
// page call that comes between the two (it goes first) finds the most already compiled.
const WARM_UPS = [
  { ...LLAMA, model_type: 'mixtral', architectures: ['MixtralForCausalLM'], num_local_experts: 4, num_experts_per_tok: 2 },
  LLAMA,
].map((config) => JSON.stringify({ name: 'warm-up', library: 'transformers', mode: 'memfit', config: JSON.stringify(config) }));

function firstModule() {
  if (!first) {
    first = load('memfit.mjs', pageModule, createFirst).then((m) => {
      if (steps) steps.wasm_ready = now();
      // V8 compiles a WebAssembly function on its first call (lazily, in its baseline tier):
      // a fresh page's first estimate paid for compiling most of the module. The warm-ups do
      // that while the page still waits for the Hub, one task each: a call already waiting runs
      // first (its await resumes before these tasks), and one arriving meanwhile waits for one
      // small estimate at most. Once each: more runs would only make V8's optimizing tier
      // start compiling beside the page's first result.
      let next = 0;
      const warm = () => {
        try { m.wasm.estimate(WARM_UPS[next]); } catch { /* only a warm-up */ }
        if (++next < WARM_UPS.length) setTimeout(warm, 0);
      };
      setTimeout(warm, 0);
      return m;
    });
  }
  return first;
}

/** @type {Promise<any> | null} */
let text = null;
/** The tokenizer.json the text module last read: not copied into it again (several MB). */
/** @type {string | null} */
let lastTokenizer = null;

/** The text module (its one function: tokenize); a failed download is not kept. */
function textModule() {
  if (!text) {
    text = import(new URL('../wasm/memfit-text.mjs', import.meta.url).href).then((m) => m.default()).catch((e) => {
      text = null;
      throw e;
    });
  }
  return text;
}

/** The error code of an api reply, without parsing replies that cannot carry one. */
/** @param {string} text */
function errorCode(text) {
  if (typeof text !== 'string' || !text.includes('"error"')) return undefined;
  try {
    return JSON.parse(text).error?.code;
  } catch {
    return undefined;
  }
}

// Start now, before the first message: boot.js starts the worker while the page still loads.
// A failure is reported to each call (onmessage awaits the same promise).
firstModule().catch(() => {});

self.onmessage = async (event) => {
  if (event.data && 'memfitModule' in event.data) {
    fromPage(event.data.memfitModule);
    return;
  }
  const { id, fn, args } = event.data || {};
  try {
    if (fn === 'tokenize') {
      const [json, prompt] = args || [];
      const t = await textModule();
      const t0 = performance.now();
      const reply = json === lastTokenizer ? t.tokenize_again(prompt) : t.tokenize(json, prompt);
      lastTokenizer = errorCode(reply) ? null : json;
      self.postMessage({ id, text: reply, ms: performance.now() - t0 });
      return;
    }
    if (steps && !steps.first_call) steps.first_call = now();
    let m = await (all || firstModule());
    if (!binds(m.wasm, fn)) throw new Error(`unknown function ${fn}`);
    const t0 = performance.now();
    let text = m.wasm[fn](...(args || []));
    let ms = performance.now() - t0;
    const code = errorCode(text);
    // (a call that started on the first module while another was fetching the second retries too)
    if (!m.all && (code === 'unknown_model_type' || code === 'not_in_this_module')) {
      // A failed download is not kept: the next such call tries again.
      all ||= load('memfit-all.mjs').then((loaded) => ({ ...loaded, all: true })).catch((e) => {
        all = null;
        throw e;
      });
      m = await all;
      const t1 = performance.now();
      text = m.wasm[fn](...(args || []));
      ms += performance.now() - t1;
    }
    self.postMessage({ id, text, ms, steps });
    steps = undefined;
  } catch (e) {
    self.postMessage({ id, failure: String(e && e.message ? e.message : e) });
  }
};
