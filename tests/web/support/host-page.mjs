// A page of another origin than memfit's site, for the embed widget (tests/web/embed*.test.mjs,
// bench.mjs): it answers every request with the HTML last set.
import { createServer } from 'node:http';

/** @returns {Promise<{url: string, setHtml: (html: string) => void, close: () => Promise<void>}>} */
export async function startHostPage() {
  let html = '';
  const server = createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(html);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${address.port}`,
    setHtml: (h) => { html = h; },
    close: () => {
      server.closeAllConnections?.();
      return new Promise((r) => server.close(() => r(undefined)));
    },
  };
}
