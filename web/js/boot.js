// @ts-check
// A classic script in <head>: for a link that computes at once (?model=…), start the WASM worker
// while the page's modules are still loading. Worker start-up (thread, script, then the module)
// delayed the first result when app.js started it; from here it overlaps
// the module graph and the Hub's answers. api.js adopts this worker on its first call.
if (new URLSearchParams(location.search).get('model')) {
  try {
    // beside this script, as api.js finds it beside itself (the page's own URL may lack a '/')
    const script = /** @type {HTMLScriptElement} */ (document.currentScript);
    /** @type {any} */ (self).memfitBootWorker = new Worker(new URL('worker.js', script.src), { type: 'module', name: 'memfit' });
    performance.mark('memfit:worker');
  } catch {
    // no module workers: api.js reports it on its first call
  }
}
