// Generated text for the tokenizer oracles (tokenizer-oracle.test.mjs: the CLI,
// text_module.test.mjs: the page's text module), from a fixed seed so a failure can be replayed:
// random Unicode (astral, emoji and ZWJ sequences, CJK, combining marks, scripts), whitespace
// runs, digits, contractions, and the tokenizer's own special-token strings embedded.

/** mulberry32: a fixed-seed generator, so a failure can be replayed. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Code point ranges assigned long ago, so the engines' differing Unicode versions agree: the
// crates the oracle uses (onig, unicode_categories, unicode-normalization) and PCRE2/utf8proc each
// carry their own tables. LATE lists the few later assignments inside these ranges (Unicode 11+).
const RANGES = [
  [0x20, 0x7e], [0xa0, 0x24f], [0x300, 0x36f], [0x370, 0x3ff], [0x400, 0x4ff], [0x590, 0x5ff], [0x600, 0x6ff],
  [0x900, 0x97f], [0xe00, 0xe5b], [0x1100, 0x11ff], [0x1e00, 0x1eff], [0x2000, 0x206f], [0x20a0, 0x20bf],
  [0x2100, 0x214f], [0x2190, 0x23ff], [0x2460, 0x24ff], [0x2500, 0x27bf], [0x3000, 0x303f], [0x3040, 0x30ff],
  [0x4e00, 0x9fa5], [0xac00, 0xd7a3], [0xf900, 0xfa2d], [0xfb00, 0xfb06], [0xfe30, 0xfe4f], [0xff01, 0xff5e],
  [0x1d400, 0x1d7ff], [0x1f300, 0x1f5ff], [0x1f600, 0x1f64f], [0x1f900, 0x1f9ff], [0x20000, 0x2a6d6],
];
const LATE = new Set([0x05ef, 0x061d]);
const WORDS = ['the', 'Hello', 'world', "don't", "it's", "we'll", "I'M", "they've", 'naïve', 'café', 'straße',
  'İstanbul', 'ΟΔΥΣΣΕΥΣ', 'ﬁne', 'Ｆｕｌｌ', '①②', 'x²', 'e\u0301', 'n\u0303o', '👨‍👩‍👧', '👍🏽', '🤗', '你好', '世界',
  'こんにちは', '안녕하세요', 'Привет', 'مرحبا', 'नमस्ते', 'hello', 'token', 'affable', 'unable', '[MASK]', '<tag>'];
const SPACES = [' ', '  ', '   ', '\t', '\n', '\n\n', '\r\n', ' \n ', '\u00a0', '\u3000', '\u0085', '\u2028', '\u200b', '\u000b', '\u180e'];
const DIGITS = ['0', '7', '42', '123', '2024', '3.14159', '1,000,000', '-17', '٣٤', '١٢٣'];

/** Random text for a tokenizer whose special-token strings are `specials`. */
export function makeText(next, specials) {
  const pick = (/** @type {any[]} */ list) => list[Math.floor(next() * list.length)];
  const parts = [];
  const n = 1 + Math.floor(next() * 12);
  for (let i = 0; i < n; i++) {
    const r = next();
    if (r < 0.3) parts.push(pick(WORDS));
    else if (r < 0.45) parts.push(pick(SPACES));
    else if (r < 0.55) parts.push(pick(DIGITS));
    else if (r < 0.65 && specials.length) parts.push(pick([' ', '', '  ']) + pick(specials) + pick([' ', '', '\n']));
    else {
      let s = '';
      const len = 1 + Math.floor(next() * 6);
      for (let k = 0; k < len; k++) {
        const [lo, hi] = pick(RANGES);
        const c = lo + Math.floor(next() * (hi - lo + 1));
        if (!LATE.has(c)) s += String.fromCodePoint(c);
      }
      parts.push(s);
    }
    if (next() < 0.5) parts.push(' ');
  }
  return parts.join('');
}
