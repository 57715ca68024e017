// wasm/node-esm.js (--extern-pre-js): lets Emscripten 3.1.6's ES module output run under node.
// Its node path uses require() and __dirname, which an ES module does not have; define both
// from import.meta.url. In a browser or a worker both stay undefined and nothing else changes.
const memfitIsNode = typeof process == 'object' && typeof process.versions == 'object' &&
                     typeof process.versions.node == 'string';
const require = memfitIsNode ? (await import('module')).createRequire(import.meta.url) : undefined;
const __dirname = memfitIsNode ? require('path').dirname(require('url').fileURLToPath(import.meta.url)) : undefined;
