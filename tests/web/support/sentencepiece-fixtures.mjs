// tokenizer.json files with the Precompiled normalizer, for the live oracle: sentencepiece's own
// compiled rules (nmt_nfkc, nfkc_cf), taken from tiny models that Debian's spm_train trains here
// (no model can be downloaded), laid out as transformers' T5Converter lays out a converted
// SentencePiece Unigram model. What memfit must produce on them comes from the `tokenizers`
// library, never from memfit.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The fields of a protobuf message: [field number, wire type, value (bigint or Buffer)]. */
function fields(buf) {
  const out = [];
  let at = 0;
  const varint = () => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const b = buf[at++];
      if (b === undefined) throw new Error('truncated varint');
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
  };
  while (at < buf.length) {
    const key = varint();
    const field = Number(key >> 3n), wire = Number(key & 7n);
    if (wire === 0) out.push([field, wire, varint()]);
    else if (wire === 1) { out.push([field, wire, buf.subarray(at, at + 8)]); at += 8; }
    else if (wire === 2) { const n = Number(varint()); out.push([field, wire, buf.subarray(at, at + n)]); at += n; }
    else if (wire === 5) { out.push([field, wire, buf.subarray(at, at + 4)]); at += 4; }
    else throw new Error(`wire type ${wire}`);
  }
  return out;
}

/** pieces [[piece, score, type]], unk_id and the charsmap of a ModelProto (sentencepiece_model.proto). */
function readModel(path) {
  const model = { pieces: [], unkId: 0, charsmap: Buffer.alloc(0) };
  for (const [field, , value] of fields(readFileSync(path))) {
    if (field === 1) {
      const p = ['', 0, 1];
      for (const [f, , v] of fields(value)) {
        if (f === 1) p[0] = v.toString('utf8');
        else if (f === 2) p[1] = v.readFloatLE(0);
        else if (f === 3) p[2] = Number(v);
      }
      model.pieces.push(p);
    } else if (field === 2) {
      for (const [f, , v] of fields(value)) if (f === 40) model.unkId = Number(v);
    } else if (field === 3) {
      for (const [f, , v] of fields(value)) if (f === 2) model.charsmap = v;
    }
  }
  return model;
}

const CORPUS_WORDS = ['the', 'quick', 'brown', 'fox', 'Hello', 'world', 'naïve', 'café', 'ﬁne', 'Ｆｕｌｌ', '①②', 'x²',
  'e\u0301', '你好', 'こんにちは', '안녕하세요', 'Привет', 'مرحبا', 'नमस्ते', '👍🏽', "don't", '123'];

/** T5Converter's layout of a Unigram model with a charsmap (SpmConverter.normalizer / pre_tokenizer / decoder). */
function t5Layout(model) {
  const added = (id) => ({ id, content: model.pieces[id][0], single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  const specials = model.pieces.map((p, id) => [p, id]).filter(([p]) => p[2] === 2 || p[2] === 3).map(([, id]) => added(id));
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: specials,
    normalizer: { type: 'Sequence', normalizers: [
      { type: 'Precompiled', precompiled_charsmap: model.charsmap.toString('base64') },
      { type: 'Strip', strip_left: false, strip_right: true },
      { type: 'Replace', pattern: { Regex: ' {2,}' }, content: '▁' }] },
    pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
      pair: [{ Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }, { Sequence: { id: 'B', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
      special_tokens: { '</s>': { id: '</s>', ids: [2], tokens: ['</s>'] } },
    },
    decoder: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
    model: { type: 'Unigram', unk_id: model.unkId, vocab: model.pieces.map(([p, s]) => [p, s]), byte_fallback: false },
  };
}

/**
 * [name, tokenizer.json object] for models spm_train trains in `dir` with each of sentencepiece's
 * compiled rule sets; throws (failing the test) when spm_train is missing (scripts/lib/deps.sh).
 */
export function precompiledTokenizers(dir) {
  const corpus = join(dir, 'spm-corpus.txt');
  // the listed words and made-up ones from syllables, so the vocabulary has some hundred pieces
  const syllables = ['ka', 'to', 'ri', 'men', 'sol', 'ex', 'an', 'qu', 'ine', 'ed', 'ly', 'st'];
  const words = [...CORPUS_WORDS];
  for (let i = 0; i < 300; i++) words.push(syllables[i % 12] + syllables[(i * 5 + 3) % 12] + (i % 3 ? syllables[(i * 7) % 12] : ''));
  const lines = [];
  for (let i = 0; i < 2000; i++) lines.push(Array.from({ length: 8 }, (_, k) => words[(i * 7 + k * 13 + (i >> 3)) % words.length]).join(' '));
  writeFileSync(corpus, lines.join('\n') + '\n');
  const out = [];
  for (const rules of ['nmt_nfkc', 'nfkc_cf']) {
    const prefix = join(dir, `spm-${rules}`);
    execFileSync('spm_train', [`--input=${corpus}`, `--model_prefix=${prefix}`, '--vocab_size=300', '--num_threads=1',
      '--minloglevel=2', '--hard_vocab_limit=false', `--normalization_rule_name=${rules}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    const model = readModel(`${prefix}.model`);
    if (!model.charsmap.length) throw new Error(`${prefix}.model has no precompiled_charsmap`);
    out.push([`precompiled-${rules}-t5`, t5Layout(model)]);
    // the rules alone, with a plain Replace after them (no Metaspace): what Precompiled writes
    // reaches the tokens unchanged
    const bare = t5Layout(model);
    bare.normalizer = { type: 'Sequence', normalizers: [bare.normalizer.normalizers[0], { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] };
    bare.pre_tokenizer = null;
    out.push([`precompiled-${rules}-whole`, bare]);
  }
  return out;
}
