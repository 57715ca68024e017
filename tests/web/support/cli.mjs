// The native CLI against the mock Hub: the page's numbers must be these.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI } from './paths.mjs';

const cache = mkdtempSync(join(tmpdir(), 'memfit-web-cli-'));

/**
 * Runs `memfit <args>` with the Hub at `endpoint`; resolves {code, stdout, stderr}.
 * @param {string[]} args @param {{endpoint?: string, token?: string}} [o]
 */
export function memfit(args, { endpoint, token } = {}) {
  const env = { PATH: process.env.PATH, HOME: cache, MEMFIT_CACHE: join(cache, 'cache') };
  if (endpoint) env.HF_ENDPOINT = endpoint;
  if (token) env.HF_TOKEN = token;
  return new Promise((resolve) => {
    execFile(CLI, args, { env, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

/** `memfit estimate … --json` parsed (throws with stderr on failure). */
export async function cliJson(args, o) {
  const r = await memfit(['estimate', ...args, '--json'], o);
  if (r.code !== 0) throw new Error(`memfit ${args.join(' ')} --json: exit ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}
