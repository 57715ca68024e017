// Small tokenizer.json files built here, each exercising components the four real files do not
// (WordPiece + BERT, Unigram + byte fallback, every Split behavior, Metaspace's prepend schemes,
// Digits, Punctuation, Whitespace, added-token flags, the decoders). Their vocabularies are
// made up; what they must produce comes from the real `tokenizers` library (the oracle), never
// from memfit. The library loading each file is itself the check that it is well formed.

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const WORDS = ['the', 'and', 'ing', 'ion', 'er', 'un', 'aff', 'able', 'hello', 'world', 'token', 'is', 'of', 'to', 'in'];

/** @param {boolean} lstrip @param {boolean} rstrip */
function added(id, content, { special = true, normalized = false, single_word = false, lstrip = false, rstrip = false } = {}) {
  return { id, content, single_word, lstrip, rstrip, normalized, special };
}

/** A WordPiece vocabulary: specials, ASCII characters, ##characters, some words and pieces. */
function wordpieceVocab() {
  const vocab = {};
  for (const t of ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']) vocab[t] = Object.keys(vocab).length;
  for (let c = 0x21; c < 0x7f; c++) {
    const ch = String.fromCharCode(c);
    if (ch >= 'A' && ch <= 'Z') continue;
    vocab[ch] = Object.keys(vocab).length;
    vocab['##' + ch] = Object.keys(vocab).length;
  }
  for (const ch of 'éàü中文日本語') vocab[ch] = Object.keys(vocab).length;
  for (const w of WORDS) {
    vocab[w] = Object.keys(vocab).length;
    vocab['##' + w] = Object.keys(vocab).length;
  }
  return vocab;
}

function bert() {
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [added(0, '[PAD]'), added(1, '[UNK]'), added(2, '[CLS]'), added(3, '[SEP]'),
      added(4, '[MASK]', { lstrip: true })],
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: { type: 'BertProcessing', sep: ['[SEP]', 3], cls: ['[CLS]', 2] },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 12, vocab: wordpieceVocab() },
  };
}

/** Byte tokens <0x00>..<0xFF>, for byte_fallback. */
function byteTokens() {
  const out = [];
  for (let b = 0; b < 256; b++) out.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
  return out;
}

function unigram() {
  const pieces = [['<unk>', 0], ['<s>', 0], ['</s>', 0]];
  for (const t of byteTokens()) pieces.push([t, 0]);
  let score = -2;
  for (const w of WORDS) { pieces.push(['▁' + w, score]); pieces.push([w, score - 0.5]); score -= 0.25; }
  for (const ch of LETTERS + LETTERS.toUpperCase() + '0123456789.,!?\'-') { pieces.push([ch, -8]); pieces.push(['▁' + ch, -8.5]); }
  pieces.push(['▁', -3], ['中', -6], ['文', -6], ['▁▁', -5]);
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [added(0, '<unk>'), added(1, '<s>'), added(2, '</s>'),
      added(pieces.length, '<tag>', { special: false, normalized: true, single_word: true })],
    normalizer: { type: 'Sequence', normalizers: [{ type: 'NFKC' }, { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }] },
    pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: true },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
      pair: [{ Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { '<s>': { id: '<s>', ids: [1], tokens: ['<s>'] }, '</s>': { id: '</s>', ids: [2], tokens: ['</s>'] } },
    },
    decoder: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: true },
    model: { type: 'Unigram', unk_id: 0, vocab: pieces, byte_fallback: true },
  };
}

/** A BPE over single characters and a few merges (with prefix/suffix conventions when asked). */
function bpeModel({ prefix = null, suffix = null, byteFallback = false, unk = '<unk>', fuseUnk = false, pairs = false } = {}) {
  const vocab = { '<unk>': 0, '<s>': 1, '</s>': 2 };
  const add = (t) => { if (!(t in vocab)) vocab[t] = Object.keys(vocab).length; };
  if (byteFallback) byteTokens().forEach(add);
  const chars = LETTERS + LETTERS.toUpperCase() + '0123456789 .,!?\'-▁_#';
  for (const ch of chars) {
    add(ch);
    if (prefix) add(prefix + ch);
    if (suffix) add(ch + suffix);
    if (prefix && suffix) add(prefix + ch + suffix);
  }
  const merges = [];
  for (const w of WORDS) {
    // merge left to right: w[0..i] + w[i]
    let left = w[0];
    for (let i = 1; i < w.length; i++) {
      const right = (prefix ?? '') + w[i] + (suffix && i === w.length - 1 ? suffix : '');
      const merged = left + w[i] + (suffix && i === w.length - 1 ? suffix : '');
      if (!(merged in vocab)) { add(merged); merges.push([left, right]); }
      left = left + w[i];
    }
  }
  return {
    type: 'BPE', dropout: null, unk_token: unk, continuing_subword_prefix: prefix, end_of_word_suffix: suffix,
    fuse_unk: fuseUnk, byte_fallback: byteFallback, ignore_merges: false, vocab,
    merges: pairs ? merges : merges.map(([a, b]) => `${a} ${b}`),
  };
}

/** Split with one behavior (and invert), then Digits, Punctuation and Whitespace pieces. */
function split(behavior, invert, pattern) {
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [added(0, '<unk>'), added(1, '<s>'), added(2, '</s>'), added(3, '<sep>', { rstrip: true, lstrip: true })],
    normalizer: { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'StripAccents' }, { type: 'NFC' }, { type: 'Strip', strip_left: true, strip_right: false }] },
    pre_tokenizer: {
      type: 'Sequence', pretokenizers: [
        { type: 'Split', pattern, behavior, invert },
        { type: 'Digits', individual_digits: behavior === 'Isolated' },
        { type: 'Punctuation', behavior: behavior === 'Removed' ? 'Contiguous' : behavior },
      ],
    },
    post_processor: { type: 'RobertaProcessing', sep: ['</s>', 2], cls: ['<s>', 1], trim_offsets: true, add_prefix_space: false },
    decoder: { type: 'Sequence', decoders: [{ type: 'ByteFallback' }, { type: 'Fuse' }] },
    model: bpeModel({ byteFallback: true, pairs: invert }),
  };
}

function metaspace(scheme, splitPieces) {
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [added(0, '<unk>'), added(1, '<s>'), added(2, '</s>')],
    normalizer: { type: 'Sequence', normalizers: [{ type: 'NFKD' }, { type: 'Lowercase' }] },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' }, { type: 'Metaspace', replacement: '▁', prepend_scheme: scheme, split: splitPieces }] },
    post_processor: null,
    decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] },
    model: bpeModel({ unk: '<unk>', fuseUnk: true }),
  };
}

function suffixBpe() {
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [added(0, '<unk>'), added(1, '<s>'), added(2, '</s>')],
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '_' }, { type: 'Lowercase' }] },
    pre_tokenizer: { type: 'Whitespace' },
    post_processor: null,
    decoder: { type: 'BPEDecoder', suffix: '</w>' },
    model: bpeModel({ suffix: '</w>', prefix: '##', unk: '<unk>', fuseUnk: false }),
  };
}

/** [name, tokenizer.json object] for every made-up tokenizer. */
export function madeUpTokenizers() {
  const out = [['bert-wordpiece', bert()], ['unigram-metaspace', unigram()], ['bpe-suffix-whitespace', suffixBpe()]];
  const patterns = [{ Regex: '\\s+|[,.;]' }, { String: ' ' }, { Regex: "(?i:'s|'t)|\\p{N}+" }];
  for (const behavior of ['Removed', 'Isolated', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous']) {
    for (const invert of [false, true]) {
      out.push([`split-${behavior}-${invert ? 'inverted' : 'plain'}`, split(behavior, invert, patterns[(out.length) % patterns.length])]);
    }
  }
  for (const scheme of ['first', 'always', 'never']) {
    for (const s of [true, false]) out.push([`metaspace-${scheme}-${s ? 'split' : 'whole'}`, metaspace(scheme, s)]);
  }
  return out;
}

/** Variants of a real byte-level file: prefix space, no regex, Roberta processing. */
export function byteLevelVariants(real) {
  const a = structuredClone(real);
  a.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true };
  a.post_processor = { type: 'RobertaProcessing', sep: ['<|endoftext|>', 50256], cls: ['<|endoftext|>', 50256], trim_offsets: true, add_prefix_space: true };
  const b = structuredClone(real);
  b.normalizer = { type: 'Sequence', normalizers: [{ type: 'NFKC' }, { type: 'Replace', pattern: { Regex: '\\d' }, content: '#' }] };
  b.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: false }, { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: true }] };
  return [['gpt2-prefix-space-roberta', a], ['gpt2-nfkc-digits', b]];
}

/**
 * GPT-2's file with other models' pre-tokenizer regexes in front of its byte-level step: the
 * patterns of DeepSeek V3 and DeepSeek LLM (line-anchored `$`), BLOOM (a class nested in a
 * class), tekken / o200k (case-split letters) and a Han-script split — the places where
 * Oniguruma's meaning (the library's) differs from PCRE2's.
 */
export function splitVariants(real) {
  const splits = (/** @type {string[]} */ patterns) => {
    const t = structuredClone(real);
    t.pre_tokenizer = { type: 'Sequence', pretokenizers: [
      ...patterns.map((p) => ({ type: 'Split', pattern: { Regex: p }, behavior: 'Isolated', invert: false })),
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }] };
    return t;
  };
  return [
    ['deepseek-v3-splits', splits(['\\p{N}{1,3}', '[一-龥぀-ゟ゠-ヿ]+',
      '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+'])],
    ['deepseek-llm-splits', splits(['[\\r\\n]', '\\s?[!-/:-~！-／：-～‘-‟　-。]+', '\\s+$', '[一-龥ࠀ-一가-퟿]+', '\\p{N}+'])],
    ['bloom-split', splits([' ?[^(\\s|[.,!?…。，、।۔،])]+'])],
    ['tekken-split', splits(['[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+'])],
    ['han-split', splits(['\\p{Han}+', '\\p{Hiragana}+|\\p{Katakana}+'])],
  ];
}
