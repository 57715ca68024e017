// The embed widget on a page of a *different* origin: one <script type="module"> from the
// memfit site, <memfit-estimate> elements, hostile page CSS that must not get in, widget CSS
// that must not get out, the WASM loaded once for all elements; and embed.html in an iframe.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startMockHub } from './support/mock-hub.mjs';
import { startHostPage } from './support/host-page.mjs';
import { serveStatic } from '../../web/tools/serve.mjs';
import { launch, openPage, shot } from './support/browser.mjs';
import { cliJson } from './support/cli.mjs';
import { WEB_DIR, need } from './support/paths.mjs';

let hub, site, host, hostUrl, browser;

before(async () => {
  need(join(WEB_DIR, 'embed.js'), 'the built site (web/tools/build.mjs)');
  hub = await startMockHub();
  site = await serveStatic(WEB_DIR);
  host = await startHostPage();
  hostUrl = host.url;
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await site?.close();
  await hub?.close();
  await host?.close();
});

test('the widget on another origin: same numbers as the CLI, styles isolated, WASM loaded once', async () => {
  host.setHtml(`<!doctype html><html><head><title>a blog</title>
    <style>* { color: rgb(255, 0, 0) !important; font-size: 31px; } td { background: rgb(0, 255, 0); }</style>
    <script type="module" src="${site.url}/embed.js"></script></head><body>
    <p class="box" id="outside">The page's own text.</p>
    <memfit-estimate id="a" model="mistralai/Mistral-7B-v0.1" dtypes="float16,int4" endpoint="${hub.url}"></memfit-estimate>
    <memfit-estimate id="b" model="gpt2" mode="accelerate" endpoint="${hub.url}"></memfit-estimate>
    <memfit-estimate id="c" model="memfit-test/does-not-exist" endpoint="${hub.url}"></memfit-estimate>
    </body></html>`);
  const { page, context, problems, requests } = await openPage(browser);
  await page.goto(`${hostUrl}/`);
  await page.waitForFunction(() => ['a', 'b', 'c'].every((id) => ['result', 'error'].includes(document.getElementById(id).dataset.state)), null, { timeout: 30000 });
  const rows = (id) => page.evaluate((i) => [...document.getElementById(i).shadowRoot.querySelectorAll('tbody tr')]
    .map((tr) => [...tr.children].map((c) => c.textContent)), id);

  const a = await cliJson(['mistralai/Mistral-7B-v0.1', '--dtypes', 'float16', 'int4'], { endpoint: hub.url });
  assert.deepEqual(await rows('a'), a.rows.map((r) => [r.dtype, r.largest_layer, r.total, r.training]));
  const b = await cliJson(['gpt2', '--compat', 'accelerate'], { endpoint: hub.url });
  assert.deepEqual(await rows('b'), b.rows.map((r) => [r.dtype, r.largest_layer, r.total, r.training]));
  assert.equal(await page.evaluate(() => document.getElementById('c').dataset.state), 'error');
  assert.match(await page.evaluate(() => document.getElementById('c').shadowRoot.textContent), /does not exist/);

  // the page's CSS does not get in …
  const inside = await page.evaluate(() => {
    const td = document.getElementById('a').shadowRoot.querySelector('td');
    const s = getComputedStyle(td);
    return { color: s.color, background: s.backgroundColor, size: s.fontSize };
  });
  assert.notEqual(inside.background, 'rgb(0, 255, 0)');
  assert.notEqual(inside.size, '31px');
  // … and the widget's CSS (.box, table styles) does not get out
  const outside = await page.evaluate(() => {
    const s = getComputedStyle(document.getElementById('outside'));
    return { border: s.borderTopWidth, padding: s.paddingTop };
  });
  assert.deepEqual(outside, { border: '0px', padding: '0px' });

  const wasmLoads = requests.filter((u) => u.endsWith('/wasm/memfit.wasm'));
  assert.equal(wasmLoads.length, 1, `the WASM is fetched once: ${wasmLoads}`);
  assert.ok(requests.every((u) => u.startsWith(site.url) || u.startsWith(hub.url) || u.startsWith(hostUrl) || u.startsWith('blob:')),
    `no third-party requests: ${requests.filter((u) => !u.startsWith(site.url) && !u.startsWith(hub.url) && !u.startsWith(hostUrl))}`);
  assert.deepEqual(problems.filter((p) => !/404/.test(p)), []);
  await shot(page, 'embed-other-origin');
  await context.close();
});

test("the widget under a host page's strict CSP (no 'unsafe-eval')", async () => {
  // The widget needs its site, blob: (its worker) and 'wasm-unsafe-eval' (WebAssembly itself),
  // nothing more: embind is built with -sDYNAMIC_EXECUTION=0 (no new Function()).
  host.setHtml(`<!doctype html><html><head>
    <meta http-equiv="Content-Security-Policy" content="script-src ${site.url} blob: 'wasm-unsafe-eval'">
    <script type="module" src="${site.url}/embed.js"></script></head><body>
    <memfit-estimate id="a" model="gpt2" endpoint="${hub.url}"></memfit-estimate></body></html>`);
  const { page, context, problems } = await openPage(browser);
  await page.goto(`${hostUrl}/`);
  await page.waitForFunction(() => ['result', 'error'].includes(document.getElementById('a').dataset.state), null, { timeout: 30000 });
  assert.equal(await page.evaluate(() => document.getElementById('a').dataset.state), 'result',
    await page.evaluate(() => document.getElementById('a').shadowRoot.textContent));
  assert.deepEqual(problems, []);
  await context.close();
});

test('embed.html in an iframe of another origin', async () => {
  const src = `${site.url}/embed.html?model=${encodeURIComponent('meta-llama/Meta-Llama-3-8B')}&dtypes=float16,int8&endpoint=${encodeURIComponent(hub.url)}`;
  host.setHtml(`<!doctype html><html><body><iframe id="f" title="memfit" src="${src}" width="640" height="300"></iframe></body></html>`);
  const { page, context } = await openPage(browser);
  await page.goto(`${hostUrl}/`);
  const frame = page.frameLocator('#f');
  await frame.locator('memfit-estimate[data-state=result]').waitFor({ timeout: 30000 });
  const text = await frame.locator('memfit-estimate').evaluate((e) => e.shadowRoot.textContent);
  const cli = await cliJson(['meta-llama/Meta-Llama-3-8B', '--dtypes', 'float16', 'int8'], { endpoint: hub.url });
  for (const r of cli.rows) assert.ok(text.includes(r.total), `${r.dtype} ${r.total} in ${text}`);
  await shot(page, 'embed-iframe');
  await context.close();
});
