#!/usr/bin/env node
// Assembles the static site: web/ (less tools/ and package.json) + the WASM module.
//   node web/tools/build.mjs [--wasm build/wasm-release/wasm/dist] [--out build/web]
// The result is plain files: any static server (or scripts/run.sh serve) can serve the folder.
// Each text or WASM file also gets a precompressed FILE.gz beside it, for servers that send those
// to clients accepting gzip (nginx gzip_static, web/tools/serve.mjs): made by zopfli where it is
// installed — still gzip, any browser decodes it, ~4.5% smaller than gzip -9 — else by zlib -9.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
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

const COMPRESSIBLE = /\.(wasm|mjs|js|css|html|json|svg|txt)$/;

/**
 * Writes FILE.gz beside FILE (temp file + rename: never a half-written .gz). Returns its size.
 * @param {string} file
 */
export function precompress(file) {
  const zopfli = spawnSync('zopfli', ['-c', file], { maxBuffer: 1 << 28 });
  const gz = zopfli.status === 0 && !zopfli.error ? zopfli.stdout : gzipSync(readFileSync(file), { level: 9 });
  writeFileSync(`${file}.gz.tmp`, gz);
  renameSync(`${file}.gz.tmp`, `${file}.gz`);
  return gz.length;
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
  /** @type {Record<string, number>} */
  const gzipped = {};
  const walk = (/** @type {string} */ d) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      const s = statSync(p);
      if (s.isDirectory()) walk(p);
      else {
        bytes += s.size;
        files += 1;
        if (COMPRESSIBLE.test(e)) gzipped[p.slice(o.out.length + 1)] = precompress(p);
      }
    }
  };
  walk(o.out);
  return { files, bytes, gzipped };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const o = parseArgs(process.argv.slice(2));
  const { files, bytes, gzipped } = buildSite(o);
  const bundle = gzipped['wasm/memfit.wasm'] + gzipped['wasm/memfit.mjs'];
  console.log(`memfit web: ${files} files, ${bytes} bytes in ${o.out}; module as served (precompressed ` +
              `.gz): ${bundle} bytes`);
}
