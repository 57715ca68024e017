// Where the tests find what the build made. Every path can be overridden by the environment
// (scripts/test.sh sets them); the defaults are the presets' build folders.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const env = (/** @type {string} */ name, /** @type {string} */ def) => resolve(process.env[name] || def);

/** memfit.mjs + memfit.wasm */
export const WASM_DIR = env('MEMFIT_WASM_DIR', join(ROOT, 'build/wasm-release/wasm/dist'));
/** the assembled site (web/tools/build.mjs) */
export const WEB_DIR = env('MEMFIT_WEB_DIR', join(ROOT, 'build/web'));
/** the native CLI, for "the page's numbers are the CLI's" */
export const CLI = env('MEMFIT_CLI', join(ROOT, 'build/native-debug/native/memfit'));
/** screenshots of the main states, written on every run */
export const SHOTS = env('MEMFIT_SCREENSHOTS', join(ROOT, 'build/web-tests/screenshots'));
export const REFERENCE = env('MEMFIT_REFERENCE_DIR', join(ROOT, '../shared/reference'));
export const CONFIGS = join(ROOT, 'tests/fixtures/configs');
export const GOLDEN = join(REFERENCE, 'golden');
export const CHROMIUM = process.env.MEMFIT_CHROMIUM || (existsSync('/usr/lib/chromium/chromium') ? '/usr/lib/chromium/chromium' : '/usr/bin/chromium');

/** @param {string} path @param {string} what */
export function need(path, what) {
  if (!existsSync(path)) throw new Error(`${what} not found at ${path} (see tests/web/support/paths.mjs for the variable to set)`);
  return path;
}

