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
//   out: {id, text, ms, ready?}  text: the api's JSON reply; ms: time spent in WASM; ready (first
//                                reply only): when the module had loaded, ms since the epoch
//        {id, failure}           a module itself could not load or threw (not an api error)

/** @typedef {{wasm: any, functions: Set<string>, all?: boolean}} Loaded */

/** @param {string} file @returns {Promise<Loaded>} */
function load(file) {
  const url = new URL(`../wasm/${file}`, import.meta.url).href;
  return import(url).then((m) => m.default()).then((wasm) => ({
    wasm,
    // The api's functions, as the module lists them (supported().functions: api.h's one list).
    functions: new Set(JSON.parse(wasm.supported()).functions),
  }));
}

/** @type {Promise<Loaded> | null} */
let first = null;
/** @type {Promise<Loaded> | null} */
let all = null;
/** @type {number | undefined} */
let readyAt;

// A small Llama-shaped config: one estimate of it runs the code every estimate runs.
const WARM_UP = JSON.stringify({
  name: 'warm-up', library: 'transformers', mode: 'memfit',
  config: JSON.stringify({
    model_type: 'llama', architectures: ['LlamaForCausalLM'], vocab_size: 256, hidden_size: 64,
    intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2,
    torch_dtype: 'bfloat16',
  }),
});

function firstModule() {
  if (!first) {
    first = load('memfit.mjs').then((m) => {
      readyAt = performance.timeOrigin + performance.now();
      // V8 compiles a WebAssembly function on its first call, in its baseline tier, and
      // optimizes it once it has run hot: a fresh page's first estimate paid for both (~40 ms).
      // A few estimates of a tiny model, one task each, do that while the page still waits for
      // the Hub; a call already waiting runs first (its await resumes before these tasks), and
      // one arriving meanwhile waits for one small estimate at most.
      let left = 6;
      const warm = () => {
        try { m.wasm.estimate(WARM_UP); } catch { /* only a warm-up */ }
        if (--left > 0) setTimeout(warm, 0);
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
    let m = await (all || firstModule());
    if (!m.functions.has(fn)) throw new Error(`unknown function ${fn}`);
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
    self.postMessage({ id, text, ms, ready: readyAt });
    readyAt = undefined;
  } catch (e) {
    self.postMessage({ id, failure: String(e && e.message ? e.message : e) });
  }
};
