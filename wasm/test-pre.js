// wasm/test-pre.js (--pre-js of the node test programs): the environment of the node process
// (MEMFIT_REFERENCE_DIR, …) is visible to getenv(), as it is natively.
Module['preRun'] = Module['preRun'] || [];
Module['preRun'].push(function () { Object.assign(ENV, process.env); });
