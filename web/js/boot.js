// @ts-check
// A classic script in <head>: for a link that computes at once (?model=…), start the WASM worker
// while the page's modules are still loading. Worker start-up (thread, script, then the module)
// delayed the first result when app.js started it; from here it overlaps
// the module graph and the Hub's answers. api.js adopts this worker on its first call.
const bootQuery = new URLSearchParams(location.search);
if (bootQuery.get('model')) {
  try {
    // beside this script, as api.js finds it beside itself (the page's own URL may lack a '/')
    const script = /** @type {HTMLScriptElement} */ (document.currentScript);
    // (worker.js's PAGE_COMPILES: the first module comes from here)
    const worker = new Worker(new URL('worker.js', script.src), { type: 'module', name: 'memfit:page-compiles' });
    /** @type {any} */ (self).memfitBootWorker = worker;
    performance.mark('memfit:worker');
    // The first module's .wasm, fetched and compiled here and handed over: a worker only asks for
    // it once its thread has started and its script has loaded and run, which on a first visit
    // came after the Hub's config.json, so the page's first estimate compiled the module's code
    // instead of the warm-ups (worker.js) doing it first. The worker fetches it itself when
    // this cannot (null: no streaming compile, a MIME type other than application/wasm, an error).
    /** @param {WebAssembly.Module | null} module */
    const give = (module) => {
      try {
        worker.postMessage({ memfitModule: module });
      } catch {
        worker.postMessage({ memfitModule: null });  // a module that cannot be posted
      }
    };
    try {
      WebAssembly.compileStreaming(fetch(new URL('../wasm/memfit.wasm', script.src), { credentials: 'same-origin' }))
        .then(give, () => give(null));
    } catch {
      give(null);
    }
  } catch {
    // no module workers: api.js reports it on its first call
  }
}

// …and ask the Hub for the model's info and config.json now, beside the worker, instead of once
// the page's modules have loaded and run: those are the page's first two requests (model.js),
// and hub.js takes these answers (takePrefetched) when it asks for the same URL with no token.
// Only for a plain model id; the URLs are built as hub.js builds them (modelInfo, fileUrl), and
// the endpoint's default is state.js's DEFAULT_ENDPOINT. An answer nobody takes is dropped.
(() => {
  const id = bootQuery.get('model') || '';
  const offline = bootQuery.get('offline');
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)?$/.test(id) || id.includes('..') ||
      offline === '1' || offline === 'true' || typeof fetch !== 'function') return;
  const endpoint = (bootQuery.get('endpoint') || 'https://huggingface.co').replace(/\/+$/, '');
  // A token remembered for this endpoint (token.js's key): the page's requests carry it, and
  // hub.js takes no answer asked for without one — so none is asked for.
  try {
    if (localStorage.getItem(`memfit.token:${new URL(endpoint).origin}`)) return;
  } catch {
    return;  // no storage, or not a URL: the page asks (and reports) itself
  }
  const revision = bootQuery.get('revision') || 'main';
  const path = id.split('/').map(encodeURIComponent).join('/');
  const info = `${endpoint}/api/models/${path}${revision !== 'main' ? `/revision/${encodeURIComponent(revision)}` : ''}?blobs=true`;
  const config = `${endpoint}/${path}/resolve/${encodeURIComponent(revision)}/config.json`;
  /** @type {Map<string, Promise<Response | null>>} */
  const early = new Map();
  for (const url of [config, info]) {
    try {
      // as hub.js asks (HubClient.get), with its default timeout: a stalled answer cannot hold
      // the page longer than its own request would
      early.set(url, fetch(url, {
        credentials: 'omit', referrerPolicy: 'no-referrer', cache: 'default', redirect: 'follow', mode: 'cors',
        signal: AbortSignal.timeout(20000),
      }).catch(() => null));
    } catch {
      // a URL fetch refuses: hub.js asks itself
    }
  }
  /** @type {any} */ (self).memfitPrefetch = early;
  performance.mark('memfit:prefetch');
})();
