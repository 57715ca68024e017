// @ts-check
// Copying a result (Markdown, JSON, the share link, the plan) to the clipboard, with a fallback
// for browsers without the async clipboard; the status element says what happened.

import { el } from './dom.js';
import { $ } from './page.js';

/** @param {string} text @param {string} what @param {string} [statusId] where to say it was copied */
export async function copy(text, what, statusId = 'copy-status') {
  const status = $(statusId);
  try {
    await navigator.clipboard.writeText(text);
    status.textContent = `${what} copied.`;
  } catch {
    const area = el('textarea', { class: 'visually-hidden', 'aria-hidden': 'true' }, text);
    document.body.append(area);
    /** @type {HTMLTextAreaElement} */ (area).select();
    const ok = document.execCommand('copy');
    area.remove();
    status.textContent = ok ? `${what} copied.` : `Could not copy: select the text and copy it by hand.`;
  }
  status.dataset.copied = text;
}
