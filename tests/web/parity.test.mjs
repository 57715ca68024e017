// The WASM module (as the page loads it) against the native CLI on every fixture config:
// the same report, byte for byte in the JSON values, and the same accelerate table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { wasm } from './support/wasm.mjs';
import { CLI, CONFIGS } from './support/paths.mjs';
import { memfit } from './support/cli.mjs';

const files = readdirSync(CONFIGS).filter((f) => f.endsWith('.json')).sort();

for (const f of files) {
  test(`WASM = native CLI: ${f}`, async (t) => {
    if (!existsSync(CLI)) { t.skip(`*** SKIPPED: no native CLI at ${CLI} (set MEMFIT_CLI) ***`); return; }
    const id = f.slice(0, -5).replace('--', '/');
    const m = await wasm();
    const library = id.startsWith('timm/') ? 'timm' : 'transformers';
    const path = join(CONFIGS, f);
    const config = readFileSync(path, 'utf8');
    for (const mode of ['memfit', 'accelerate']) {
      const args = ['estimate', path, '--name', id, '--library_name', library, ...(mode === 'accelerate' ? ['--compat', 'accelerate'] : [])];
      const [json, text] = await Promise.all([memfit([...args, '--json']), memfit(args)]);
      const ours = m.estimate({ config, name: id, library, mode });
      if (json.code !== 0) {
        // the same failure, with the same code and message
        assert.ok(ours.error, `${f} ${mode}: the CLI failed (${json.stderr.trim()}), WASM did not`);
        assert.deepEqual(ours.error, JSON.parse(json.stderr));
        continue;
      }
      assert.equal(ours.error, undefined, `${f} ${mode}: ${JSON.stringify(ours.error)}`);
      const { table, ...report } = ours;
      assert.deepEqual(report, JSON.parse(json.stdout), `${f} ${mode}: JSON`);
      assert.ok(text.stdout.startsWith(`${table}\n`), `${f} ${mode}: table`);
    }
  });
}
