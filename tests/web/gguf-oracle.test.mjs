// `memfit inspect --json` on GGUF files against npm `@huggingface/gguf` (Hugging Face's own
// reader) on the same bytes: files written here in several versions, alignments, metadata kinds
// (every value type, arrays of each, nested arrays, large 64-bit values) and ggml tensor types,
// and the files llama.cpp's converter wrote in the reference data (golden/llamacpp). Every
// metadata key (its type, element type and value), every tensor (name, dims, type, offset) and
// the data section's offset must be equal; tensor bytes must equal the element count times the
// oracle's bits per weight (GGML_QUANT_SIZES, from gguf-py's constants). A run that compares
// nothing fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, GOLDEN, ROOT } from './support/paths.mjs';
import { BLOCKS, T, tensor, writeGguf } from './support/gguf-writer.mjs';

const require = createRequire(join(ROOT, 'package.json'));
const GGUF_DIR = join(require.resolve('@huggingface/gguf'), '..');

/** The oracle's own module, and its table of bits per weight (not exported by the index). */
async function oracle() {
  const mod = await import(pathToFileURL(join(GGUF_DIR, 'index.mjs')).href);
  for (const f of readdirSync(GGUF_DIR).filter((n) => n.startsWith('chunk-') && n.endsWith('.mjs'))) {
    const chunk = await import(pathToFileURL(join(GGUF_DIR, f)).href);
    if (chunk.GGML_QUANT_SIZES) return { gguf: mod.gguf, sizes: chunk.GGML_QUANT_SIZES };
  }
  throw new Error('@huggingface/gguf: GGML_QUANT_SIZES not found in its dist chunks');
}

function files() {
  const dir = mkdtempSync(join(tmpdir(), 'memfit-gguf-oracle-'));
  const out = [];
  const every = [
    ['general.architecture', T.STR, 'llama'], ['general.name', T.STR, 'oracle ✓ ünïcode'],
    ['u8', T.U8, 255], ['i8', T.I8, -128], ['u16', T.U16, 65535], ['i16', T.I16, -32768],
    ['u32', T.U32, 4294967295], ['i32', T.I32, -2147483648], ['f32', T.F32, 0.1], ['f64', T.F64, -1.5e300],
    ['bool.t', T.BOOL, true], ['bool.f', T.BOOL, false], ['u64.big', T.U64, 18446744073709551615n],
    ['i64.min', T.I64, -9223372036854775808n], ['u64.small', T.U64, 7n], ['empty.str', T.STR, ''],
    ['arr.i32', T.ARR, [1, -2, 3], { type: T.I32 }], ['arr.f32', T.ARR, [0.5, 0.25, 1e-7], { type: T.F32 }],
    ['arr.str', T.ARR, ['a', '', 'ß'], { type: T.STR }], ['arr.bool', T.ARR, [true, false], { type: T.BOOL }],
    ['arr.u64', T.ARR, [1n, 2n ** 60n], { type: T.U64 }], ['arr.empty', T.ARR, [], { type: T.U8 }],
    ['arr.nested', T.ARR, [[1, 2], [3]], { type: T.ARR, sub: { type: T.U16 } }],
    ['llama.block_count', T.U32, 1], ['llama.embedding_length', T.U32, 256],
    ['llama.attention.head_count', T.U32, 4], ['llama.context_length', T.U64, 2048n],
  ];
  const types = Object.keys(BLOCKS).map(Number);
  const tensors = types.map((t, i) => tensor(`blk.0.t${i}.weight`, [BLOCKS[t][0] * 2, 3], t));
  out.push(['v3 every value type, every ggml type', writeGguf({ version: 3, kv: every, tensors })]);
  out.push(['v2, alignment 64', writeGguf({ version: 2, alignment: 64,
    kv: [['general.architecture', T.STR, 'llama'], ['general.alignment', T.U32, 64]],
    tensors: [tensor('a', [64, 2, 3], 0), tensor('b', [256], 12), tensor('c', [32, 5, 1, 2], 8)] })]);
  out.push(['no tensors', writeGguf({ version: 3, kv: [['x', T.STR, 'y']], tensors: [] })]);
  const paths = out.map(([name, bytes], i) => { const p = join(dir, `f${i}.gguf`); writeFileSync(p, bytes); return [name, p]; });
  for (const family of ['qwen3', 'mixtral']) {
    const p = join(GOLDEN, 'llamacpp', family, 'model.gguf');
    if (existsSync(p)) paths.push([`llama.cpp's converter: ${family}`, p]);
    else console.error(`*** SKIPPED: ${p} not found (set MEMFIT_REFERENCE_DIR) ***`);
  }
  return paths;
}

/** memfit's JSON with integers past 2^53 kept exact (as strings). */
function memfitInspect(path) {
  const text = execFileSync(CLI, ['inspect', path, '--json'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  return JSON.parse(text.replace(/([:\[,]\s*)(-?\d{16,})(?=\s*[,\]\}])/g, '$1"$2"'));
}

// Where the oracle's table (gguf-py's constants.py) is older than ggml: Q8_1 is still (32, 4 + 4 +
// 32) there, from when its d and s were floats; ggml-common.h's block_q8_1 is two ggml_half + 32
// int8 (static_assert "wrong q8_1 block size/padding"), 36 bytes, which ggml.c's type_traits use.
const ORACLE_STALE = { 9: (36 * 8) / 32 };

const norm = (v) => (typeof v === 'bigint' ? v.toString() : Array.isArray(v) ? v.map(norm) : typeof v === 'string' && /^-?\d{16,}$/.test(v) ? v : v);
const TYPE_NAMES = ['uint8', 'int8', 'uint16', 'int16', 'uint32', 'int32', 'float32', 'bool', 'string', 'array', 'uint64', 'int64', 'float64'];
/** The oracle gives small 64-bit integers as bigint; memfit as numbers: compare as strings. */
function same(a, b) {
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (typeof a === 'bigint' || typeof b === 'bigint') return String(a) === String(b);
  return Object.is(a, b) || a === b;
}

test('memfit inspect --json equals @huggingface/gguf on GGUF files', async (t) => {
  assert.ok(existsSync(CLI), `no native CLI at ${CLI} (set MEMFIT_CLI)`);
  const { gguf, sizes } = await oracle();
  let compared = 0;
  for (const [name, path] of files()) {
    await t.test(name, async () => {
      const ref = await gguf(path, { allowLocalFile: true, typedMetadata: true });
      const ours = memfitInspect(path);
      const file = ours.files[0];
      assert.equal(file.version, ref.metadata.version);
      assert.equal(String(file.tensors), String(ref.metadata.tensor_count));
      assert.equal(String(file.metadata_count), String(ref.metadata.kv_count));
      // With no tensors there is no data section: llama.cpp (gguf.cpp) does not align its start
      // then, the oracle does.
      if (ref.tensorInfos.length) assert.equal(String(file.data_offset), String(ref.tensorDataOffset));
      const keys = Object.keys(ref.typedMetadata).filter((k) => !['version', 'tensor_count', 'kv_count'].includes(k));
      assert.deepEqual(Object.keys(ours.metadata), keys);
      for (const k of keys) {
        const r = ref.typedMetadata[k];
        const m = ours.metadata[k];
        assert.equal(m.type, TYPE_NAMES[r.type], `type of ${k}`);
        if (r.subType !== undefined) assert.equal(m.elem, TYPE_NAMES[r.subType], `element type of ${k}`);
        assert.ok(same(r.value, m.value), `value of ${k}: ${JSON.stringify(norm(r.value)).slice(0, 200)} vs ${JSON.stringify(m.value).slice(0, 200)}`);
        compared++;
      }
      assert.equal(ours.tensors.length, ref.tensorInfos.length);
      ref.tensorInfos.forEach((r, i) => {
        const m = ours.tensors[i];
        assert.equal(m.name, r.name);
        assert.deepEqual(m.ne.map(String), r.shape.map(String), `dims of ${r.name}`);
        assert.equal(m.type_id, r.dtype, `type of ${r.name}`);
        assert.equal(String(m.offset), String(r.offset), `offset of ${r.name}`);
        const numel = r.shape.reduce((a, b) => a * b, 1n);
        assert.equal(String(m.numel), String(numel));
        assert.ok(sizes[r.dtype] !== undefined, `the oracle has no size for type ${r.dtype}`);
        const bits = ORACLE_STALE[r.dtype] ?? sizes[r.dtype];
        assert.equal(m.bytes, (Number(numel) * bits) / 8, `bytes of ${r.name} (${m.type})`);
        compared++;
      });
    });
  }
  assert.ok(compared > 50, `only ${compared} values compared`);
});
