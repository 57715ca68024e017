// The offline catalog (web/catalog.json): up to date with its generator, and every entry, in
// memfit's compact form and expanded back by the page, estimates exactly as the full config.json
// it came from (both modes) — in the same WASM module the page runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { catalogText } from '../../web/tools/make-catalog.mjs';
import { fromJson } from '../../web/js/catalog.js';
import { wasm } from './support/wasm.mjs';
import { ROOT } from './support/paths.mjs';

const text = readFileSync(join(ROOT, 'web/catalog.json'), 'utf8');

test('web/catalog.json is what web/tools/make-catalog.mjs writes', () => {
  assert.equal(text, catalogText(), 'stale: run node web/tools/make-catalog.mjs');
});

test('every catalog entry estimates exactly as its full config.json', async () => {
  const m = await wasm();
  const entries = [...fromJson(JSON.parse(text)).values()];
  assert.ok(entries.length >= 40, `${entries.length} entries`);
  const full = new Map();
  for (const dir of ['tests/fixtures/configs', 'examples/configs']) {
    for (const e of entries) {
      const f = join(ROOT, dir, `${e.id.replace('/', '--')}.json`);
      try { full.set(e.id, readFileSync(f, 'utf8')); } catch { /* in the other folder */ }
    }
  }
  for (const e of entries) {
    for (const mode of ['memfit', 'accelerate']) {
      const ours = m.estimate({ name: e.id, library: e.library, mode, config: e.config });
      const theirs = m.estimate({ name: e.id, library: e.library, mode, config: full.get(e.id) });
      assert.deepEqual(ours, theirs, `${e.id} (${mode})`);
    }
  }
});
