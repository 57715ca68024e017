// @ts-check
// Number formatting for what the page draws itself (bars, module sizes, devices). The table and
// the breakdown show core's own strings; bytes here use the same rule as core's convert_bytes
// (accelerate's: 1024-based, "KB/MB/GB/TB", two decimals at most).

const UNITS = ['bytes', 'KB', 'MB', 'GB', 'TB'];

/** @param {number} size */
export function convertBytes(size) {
  for (const unit of UNITS) {
    if (size < 1024) return `${round2(size)} ${unit}`;
    size /= 1024;
  }
  return `${round2(size)} PB`;
}

/** Python's repr(round(x, 2)): "1.5", "12.0". @param {number} x */
function round2(x) {
  const s = String(Number(x.toFixed(2)));
  return /[.e]/.test(s) ? s : `${s}.0`;
}

/** 1234567 → "1,234,567" @param {number} n */
export function withCommas(n) {
  return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** 6.74e9 → "6.74B" (parameter counts) @param {number} n */
export function shortCount(n) {
  const steps = [[1e12, 'T'], [1e9, 'B'], [1e6, 'M'], [1e3, 'K']];
  for (const [v, s] of steps) if (n >= v) return `${Number((n / /** @type {number} */ (v)).toPrecision(3))}${s}`;
  return String(n);
}

/**
 * "24GiB", "64 GB", "1.5TiB", "512" (bytes) → bytes; NaN when not a size.
 * @param {string | number} text
 */
export function parseSize(text) {
  if (typeof text === 'number') return text;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?i?b?)?\s*$/i.exec(text);
  if (!m) return NaN;
  const value = Number(m[1]);
  const unit = (m[2] || '').toLowerCase();
  if (unit === '' || unit === 'b') return value;
  const power = 'kmgtp'.indexOf(unit[0]) + 1;
  const base = unit.includes('i') ? 1024 : 1000;
  return value * base ** power;
}
