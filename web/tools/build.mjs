#!/usr/bin/env node
// Assembles the static site: web/ (less tools/ and package.json) + the WASM module.
//   node web/tools/build.mjs [--wasm build/wasm-release/wasm/dist] [--out build/web]
// The result is plain files: any static server (or scripts/run.sh serve) can serve the folder.
import { cpSync, existsSync, mkdirSync, rmSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** @param {string[]} argv */
export function parseArgs(argv) {
  const o = { wasm: join(root, 'build/wasm-release/wasm/dist'), out: join(root, 'build/web') };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--wasm') o.wasm = resolve(argv[++i]);
    else if (argv[i] === '--out') o.out = resolve(argv[++i]);
    else throw new Error(`build.mjs: unknown argument ${argv[i]}`);
  }
  return o;
}

/** @param {{wasm: string, out: string}} o */
export function buildSite(o) {
  for (const f of ['memfit.mjs', 'memfit.wasm']) {
    if (!existsSync(join(o.wasm, f))) {
      throw new Error(`build.mjs: ${join(o.wasm, f)} is missing: build the wasm-release preset first`);
    }
  }
  rmSync(o.out, { recursive: true, force: true });
  mkdirSync(o.out, { recursive: true });
  const web = join(root, 'web');
  for (const entry of readdirSync(web)) {
    if (entry === 'tools' || entry === 'package.json') continue;
    cpSync(join(web, entry), join(o.out, entry), { recursive: true });
  }
  mkdirSync(join(o.out, 'wasm'), { recursive: true });
  for (const f of ['memfit.mjs', 'memfit.wasm']) cpSync(join(o.wasm, f), join(o.out, 'wasm', f));
  let bytes = 0, files = 0;
  const walk = (/** @type {string} */ d) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      const s = statSync(p);
      if (s.isDirectory()) walk(p);
      else { bytes += s.size; files += 1; }
    }
  };
  walk(o.out);
  return { files, bytes };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const o = parseArgs(process.argv.slice(2));
  const { files, bytes } = buildSite(o);
  console.log(`memfit web: ${files} files, ${bytes} bytes in ${o.out}`);
}
