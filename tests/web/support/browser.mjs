// Debian's chromium driven by playwright-core (no browser download), with the flags of
// ../shared/docs/toolchain.md. One browser per test file; a fresh context per test.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM, SHOTS } from './paths.mjs';

export async function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-dev-shm-usage',
      // each new context's window would load the omnibox popup's WebUI pages (chrome://
      // omnibox-popup.top-chrome), a second of busy CPU beside the page under test
      '--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup'],
  });
}

/**
 * A page that records console errors, page errors and every request's URL.
 * @param {import('playwright-core').Browser} browser
 * @param {object} [options] context options (colorScheme, viewport, …)
 */
export async function openPage(browser, options = {}) {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 }, ...options });
  const page = await context.newPage();
  const problems = [];
  const requests = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('dialog', (d) => { problems.push(`dialog: ${d.message()}`); d.dismiss().catch(() => {}); });
  context.on('request', (r) => requests.push(r.url()));
  return { context, page, problems, requests };
}

/** In the page: 'error' or 'result' once the page shows one (an error wins), else null. */
function shownState() {
  const error = document.getElementById('error');
  if (error && !error.hidden) return 'error';
  const results = document.getElementById('results');
  return results && !results.hidden ? 'result' : null;
}

/** In the page: resolves with `state()` once it is not null, watching attribute changes. */
function whenShown(/** @type {() => string | null} */ state, /** @type {number} */ ms) {
  return new Promise((resolve, reject) => {
    if (state()) {
      resolve(state());
      return;
    }
    const observer = new MutationObserver(() => {
      if (!state()) return;
      observer.disconnect();
      clearTimeout(timer);
      resolve(state());
    });
    const timer = setTimeout(() => {
      observer.disconnect();
      reject(new Error(`no result or error within ${ms} ms`));
    }, ms);
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ['hidden'], subtree: true });
  });
}

/** Waits until the page shows a result or an error; returns which. Polls (waitForFunction),
 * which keeps waiting across a navigation. */
export async function settle(page, timeout = 20000) {
  return (await page.waitForFunction(shownState, null, { timeout })).jsonValue();
}

/**
 * settle() for timings: the same wait, as one evaluate that resolves from a MutationObserver.
 * waitForFunction first injects Playwright's selector engine into the page (about 36 ms of
 * script on its main thread) and then polls it every frame; on 2 cores that is taken from the
 * page being timed, in the middle of its first estimate. No visitor's page runs it.
 */
export async function settleQuietly(page, timeout = 20000) {
  // one expression (DevTools evaluates it whatever the page's CSP), so both helpers come along
  return page.evaluate(`(${whenShown})(${shownState}, ${Number(timeout)})`);
}

/** The page's report as "Copy as JSON" gives it. */
export async function pageJson(page) {
  await page.click('#copy-json');
  await page.waitForFunction(() => document.getElementById('copy-status').dataset.copied);
  const text = await page.evaluate(() => document.getElementById('copy-status').dataset.copied);
  await page.evaluate(() => { delete document.getElementById('copy-status').dataset.copied; });
  return JSON.parse(text);
}

export async function errorOf(page) {
  return page.evaluate(() => ({ kind: document.getElementById('error').dataset.kind, text: document.getElementById('error').innerText }));
}

/** Writes build/web-tests/screenshots/<name>.png. */
export async function shot(page, name) {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}
