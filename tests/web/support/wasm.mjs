// The WASM modules under node, each loaded once per test process (the default one) or per call.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { WASM_DIR, need } from './paths.mjs';

let instance = null;

/**
 * The module's api (estimate, plan, inference, parse_safetensors_header, supported), parsed:
 * memfit-all, the module with every family (the page's first module, memfit.mjs, has a subset:
 * wasm/first_chunk.def; wasm_module.test.mjs holds the two to the same answers).
 */
export async function wasm(file = 'memfit-all.mjs') {
  if (file !== 'memfit-all.mjs') return load(file);
  if (!instance) instance = await load(file);
  return instance;
}

async function load(file) {
  const url = pathToFileURL(need(join(WASM_DIR, file), 'the WASM module (wasm-release preset)')).href;
  const { default: create } = await import(url);
  const m = await create();
  return {
    raw: m,
    estimate: (req) => JSON.parse(m.estimate(typeof req === 'string' ? req : JSON.stringify(req))),
    plan: (req) => JSON.parse(m.plan(typeof req === 'string' ? req : JSON.stringify(req))),
    inference: (req) => JSON.parse(m.inference(typeof req === 'string' ? req : JSON.stringify(req))),
    header: (bytes, size) => JSON.parse(m.parse_safetensors_header(bytes, size)),
    supported: () => JSON.parse(m.supported()),
  };
}
