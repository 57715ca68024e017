// @ts-check
// The Web Worker that owns the WASM module: loaded once, as soon as the worker starts (it is only
// started for a call), then every call is one synchronous api.h function run off the main
// thread. api.js terminates the worker when the page is idle, which frees the module's memory.
// Messages (see api.js):
//   in:  {id, fn, args}          fn: one of the module's api functions (api.h's list)
//   out: {id, text, ms, ready?}  text: the api's JSON reply; ms: time spent in WASM; ready (first
//                                reply only): when the module had loaded, ms since the epoch
//        {id, failure}           the module itself could not load or threw (not an api error)

/** @type {Promise<any> | null} */
let modulePromise = null;
/** @type {number | undefined} */
let readyAt;
/** The api's functions, as the module lists them (supported().functions: api.h's one list). */
/** @type {Set<string>} */
let functions = new Set();

function loadModule() {
  if (!modulePromise) {
    const url = new URL('../wasm/memfit.mjs', import.meta.url).href;
    modulePromise = import(url).then((m) => m.default()).then((wasm) => {
      readyAt = performance.timeOrigin + performance.now();
      functions = new Set(JSON.parse(wasm.supported()).functions);
      return wasm;
    });
  }
  return modulePromise;
}

// Start now, before the first message: boot.js starts the worker while the page still loads.
// A failure is reported to each call (onmessage awaits the same promise).
loadModule().catch(() => {});

self.onmessage = async (event) => {
  const { id, fn, args } = event.data || {};
  try {
    const wasm = await loadModule();
    if (!functions.has(fn)) throw new Error(`unknown function ${fn}`);
    const t0 = performance.now();
    const text = wasm[fn](...(args || []));
    const ms = performance.now() - t0;
    self.postMessage({ id, text, ms, ready: readyAt });
    readyAt = undefined;
  } catch (e) {
    self.postMessage({ id, failure: String(e && e.message ? e.message : e) });
  }
};
