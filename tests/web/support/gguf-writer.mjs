// A small GGUF writer, independent of memfit's (core's writer is what is tested): the oracle test's
// files and the mock Hub's GGUF repos. writeGguf({version, alignment?, kv, tensors}) returns the
// whole file (the data section zero-filled); ggufHeader() only the bytes before the data section
// and the file's full size, for files too large to hold (the mock Hub serves the rest as zeros).
export const T = { U8: 0, I8: 1, U16: 2, I16: 3, U32: 4, I32: 5, F32: 6, BOOL: 7, STR: 8, ARR: 9, U64: 10, I64: 11, F64: 12 };
class Bytes {
  constructor() { this.parts = []; }
  num(type, v) {
    const widths = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
    const b = Buffer.alloc(widths[type]);
    switch (type) {
      case T.U8: case T.BOOL: b.writeUInt8(Number(v)); break;
      case T.I8: b.writeInt8(v); break;
      case T.U16: b.writeUInt16LE(v); break;
      case T.I16: b.writeInt16LE(v); break;
      case T.U32: b.writeUInt32LE(v); break;
      case T.I32: b.writeInt32LE(v); break;
      case T.F32: b.writeFloatLE(v); break;
      case T.U64: b.writeBigUInt64LE(BigInt(v)); break;
      case T.I64: b.writeBigInt64LE(BigInt(v)); break;
      case T.F64: b.writeDoubleLE(v); break;
    }
    this.parts.push(b);
  }
  str(s) { const b = Buffer.from(s, 'utf8'); this.num(T.U64, b.length); this.parts.push(b); }
  value(type, v, sub) {
    if (type === T.STR) return this.str(v);
    if (type !== T.ARR) return this.num(type, v);
    this.num(T.U32, sub.type);
    this.num(T.U64, v.length);
    for (const x of v) this.value(sub.type, x, sub.sub);
  }
  get length() { return this.parts.reduce((n, b) => n + b.length, 0); }
  buffer() { return Buffer.concat(this.parts); }
}
/**
 * @param {{version:number, alignment?:number, kv:[string, number, any, any?][], tensors:[string, number[], number, number][]}} spec
 *   tensors: name, ne, ggml type, bytes
 */
export function writeGguf(spec) {
  const { head, size } = ggufHeader(spec);
  return Buffer.concat([head, Buffer.alloc(size - head.length)]);
}

/**
 * The file's bytes up to its data section (header, tensor infos, alignment padding), and its
 * whole size. @param {Parameters<typeof writeGguf>[0]} spec
 */
export function ggufHeader(spec) {
  const a = spec.alignment ?? 32;
  const w = new Bytes();
  w.parts.push(Buffer.from('GGUF'));
  w.num(T.U32, spec.version);
  w.num(T.I64, spec.tensors.length);
  w.num(T.I64, spec.kv.length);
  for (const [key, type, value, sub] of spec.kv) { w.str(key); w.num(T.U32, type); w.value(type, value, sub); }
  let offset = 0;
  for (const [name, ne, type, bytes] of spec.tensors) {
    w.str(name); w.num(T.U32, ne.length);
    for (const d of ne) w.num(T.I64, d);
    w.num(T.U32, type); w.num(T.U64, offset);
    offset += Math.ceil(bytes / a) * a;
  }
  const header = w.buffer();
  const start = spec.tensors.length ? Math.ceil(header.length / a) * a : header.length;
  return { head: Buffer.concat([header, Buffer.alloc(start - header.length)]), size: start + offset };
}

// ggml types by id: [block size, bytes per block] (ggml.c type_traits), for the writer's layout.
export const BLOCKS = { 0: [1, 4], 1: [1, 2], 2: [32, 18], 3: [32, 20], 6: [32, 22], 7: [32, 24], 8: [32, 34], 9: [32, 36],
  10: [256, 84], 11: [256, 110], 12: [256, 144], 13: [256, 176], 14: [256, 210], 15: [256, 292], 16: [256, 66],
  17: [256, 74], 18: [256, 98], 19: [256, 50], 20: [32, 18], 21: [256, 110], 22: [256, 82], 23: [256, 136],
  24: [1, 1], 25: [1, 2], 26: [1, 4], 27: [1, 8], 28: [1, 8], 29: [256, 56], 30: [1, 2], 34: [256, 54], 35: [256, 66],
  39: [32, 17], 40: [64, 36], 41: [128, 18] };
export function tensor(name, ne, type) {
  const [block, size] = BLOCKS[type];
  return [name, ne, type, (ne[0] / block) * size * ne.slice(1).reduce((a, b) => a * b, 1)];
}

