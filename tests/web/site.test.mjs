// The static site's own rules, under node: index.html preloads exactly the modules app.js
// imports (directly or not), so none is fetched late, and none is fetched for nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './support/paths.mjs';

test('index.html modulepreloads exactly the modules app.js imports', () => {
  const web = join(ROOT, 'web');
  const html = readFileSync(join(web, 'index.html'), 'utf8');
  const preloaded = [...html.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((m) => m[1]).sort();
  const seen = new Set();
  const walk = (/** @type {string} */ file) => {
    for (const m of readFileSync(join(web, file), 'utf8').matchAll(/^import .* from '\.\/([\w-]+\.js)';$/gm)) {
      const dep = `js/${m[1]}`;
      if (!seen.has(dep)) { seen.add(dep); walk(dep); }
    }
  };
  walk('js/app.js');
  assert.deepEqual(preloaded, [...seen].sort());
});
