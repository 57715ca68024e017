// What a browser test file runs against: the mock Hub, the built site served on a free port, and
// one chromium; url(params) opens the page on that Hub. close() stops all three.
import { join } from 'node:path';
import { serveStatic } from '../../../web/tools/serve.mjs';
import { launch } from './browser.mjs';
import { startMockHub } from './mock-hub.mjs';
import { WEB_DIR, need } from './paths.mjs';

/** @param {string} needed a file of the built site the tests need (relative to it) */
export async function startPageEnv(needed = 'wasm/memfit.wasm') {
  need(join(WEB_DIR, needed), 'the built site (web/tools/build.mjs)');
  const hub = await startMockHub();
  const site = await serveStatic(WEB_DIR);
  const browser = await launch();
  return {
    hub, site, browser,
    url: (/** @type {Record<string, string>} */ params) => `${site.url}/?${new URLSearchParams({ endpoint: hub.url, ...params })}`,
    close: async () => {
      await browser?.close();
      await site?.close();
      await hub?.close();
    },
  };
}
