// wasm/node-esm.js (--extern-pre-js): lets the page's ES module run under node too (the tests).
// The module is built for web and worker only (-sENVIRONMENT=web,worker); under node, pre.js
// hands it the .wasm bytes, read with the require() defined here from import.meta.url (an ES
// module has none). In a browser or a worker both stay undefined and nothing else changes.
const memfitIsNode = typeof process == 'object' && typeof process.versions == 'object' &&
                     typeof process.versions.node == 'string';
const require = memfitIsNode ? (await import('module')).createRequire(import.meta.url) : undefined;
