// wasm/pre.js (--pre-js): under node, read the module's .wasm beside it from disk (memfit.mjs →
// memfit.wasm, memfit-all.mjs → memfit-all.wasm; the generated loader would fetch() a file: URL,
// which node cannot). The caller may still pass its own wasmBinary. _scriptDir is the module's
// import.meta.url; memfitIsNode and require come from node-esm.js (this runs before Emscripten's
// own ENVIRONMENT_IS_NODE is set).
if (memfitIsNode && !Module['wasmBinary']) {
  Module['wasmBinary'] = require('fs').readFileSync(new URL(String(_scriptDir).replace(/\.mjs$/, '.wasm')));
}
