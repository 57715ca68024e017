// The WASM module under node, loaded once per test process.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { WASM_DIR, need } from './paths.mjs';

let instance = null;

/** The module's api (estimate, plan, inference, parse_safetensors_header, supported), parsed. */
export async function wasm() {
  if (!instance) {
    const url = pathToFileURL(need(join(WASM_DIR, 'memfit.mjs'), 'the WASM module (wasm-release preset)')).href;
    const { default: create } = await import(url);
    const m = await create();
    instance = {
      raw: m,
      estimate: (req) => JSON.parse(m.estimate(typeof req === 'string' ? req : JSON.stringify(req))),
      plan: (req) => JSON.parse(m.plan(typeof req === 'string' ? req : JSON.stringify(req))),
      inference: (req) => JSON.parse(m.inference(typeof req === 'string' ? req : JSON.stringify(req))),
      header: (bytes, size) => JSON.parse(m.parse_safetensors_header(bytes, size)),
      supported: () => JSON.parse(m.supported()),
    };
  }
  return instance;
}
