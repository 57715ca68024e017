// wasm/pre.js (--pre-js): under node, read memfit.wasm beside this module from disk (the
// generated loader would fetch() a file: URL, which node cannot). The caller may still pass its
// own wasmBinary. _scriptDir is the module's import.meta.url; memfitIsNode and require come from
// node-esm.js (this runs before Emscripten's own ENVIRONMENT_IS_NODE is set).
if (memfitIsNode && !Module['wasmBinary']) {
  Module['wasmBinary'] = require('fs').readFileSync(new URL('memfit.wasm', _scriptDir));
}
