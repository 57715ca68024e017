// The ES module the page loads, under node: every function of core/include/memfit/api/api.h through
// embind — strings in, strings out, errors as {"error": {code, message}}, never a throw.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { wasm } from './support/wasm.mjs';
import { CONFIGS } from './support/paths.mjs';

/** A safetensors file: 8-byte length, the header, the data. */
function safetensors(header, dataBytes) {
  const h = Buffer.from(JSON.stringify(header), 'utf8');
  const out = Buffer.alloc(8 + h.length + dataBytes);
  out.writeBigUInt64LE(BigInt(h.length), 0);
  h.copy(out, 8);
  return new Uint8Array(out);
}

test('the module exposes exactly the functions of api.h, and supported() names them', async () => {
  const m = await wasm();
  const listed = m.supported().functions;
  assert.ok(listed.includes('estimate') && listed.includes('supported'), JSON.stringify(listed));
  // embind marks the functions it exports with their argument count
  const exported = Object.keys(m.raw).filter((k) => typeof m.raw[k] === 'function' && 'argCount' in m.raw[k]);
  assert.deepEqual(exported.sort(), [...listed].sort());
});

test('control characters come back as JSON \\u escapes (the module links its own integer-only snprintf)', async () => {
  // nlohmann::json writes U+0000..U+001F with snprintf("\\u%04x"); wasm/libc_numbers.cpp
  // replaces musl's snprintf in the module, so a broken replacement shows here.
  const config = readFileSync(join(CONFIGS, 'gpt2.json'), 'utf8');
  const name = 'a\u0001b\u001fc';
  const text = (await wasm()).raw.estimate(JSON.stringify({ config, name, library: 'transformers' }));
  assert.ok(text.includes('"name":"a\\u0001b\\u001fc"'), text.slice(0, 80));
  assert.equal(JSON.parse(text).name, name);
});

test('supported() lists the transformers and timm families', async () => {
  const s = (await wasm()).supported();
  assert.ok(s.transformers.includes('llama') && s.transformers.includes('bert'), JSON.stringify(s));
  assert.ok(s.timm.length > 0);
});

test('estimate() of a config returns the report and the table', async () => {
  const config = readFileSync(join(CONFIGS, 'bert-base-cased.json'), 'utf8');
  const r = (await wasm()).estimate({ config, name: 'bert-base-cased', mode: 'accelerate' });
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  assert.equal(r.model_type, 'bert');
  assert.deepEqual(r.rows.map((x) => x.dtype), ['float32', 'float16', 'int8', 'int4']);
  assert.match(r.table, /Memory Usage for loading `bert-base-cased`/);
});

test('estimate() errors come back as {error: {code, message}}', async () => {
  const m = await wasm();
  assert.equal(m.estimate('not json').error.code, 'invalid_argument');
  assert.equal(m.estimate({ config: { model_type: 'no-such-thing' }, name: 'x' }).error.code, 'unknown_model_type');
  assert.equal(m.estimate({ config: '{"model_type": "llama"', name: 'x' }).error.code, 'invalid_json');
});

test('plan() and inference() answer JSON, result or error, without throwing', async () => {
  const m = await wasm();
  const config = readFileSync(join(CONFIGS, 'gpt2.json'), 'utf8');
  for (const reply of [m.plan({ config, name: 'gpt2', max_memory: { 0: '1GiB', cpu: '8GiB' } }),
    m.inference({ config, name: 'gpt2', context: 1024 })]) {
    assert.equal(typeof reply, 'object');
    if (reply.error) assert.equal(typeof reply.error.message, 'string');
  }
});

test('parse_safetensors_header() takes raw bytes (Uint8Array), not UTF-8 text', async () => {
  const m = await wasm();
  // a header longer than 127 bytes: its length prefix has a byte ≥ 0x80, and a non-ASCII name
  const tensors = {};
  for (let i = 0; i < 6; i++) tensors[`layer.${i}.wéight`] = { dtype: 'F16', shape: [2, 3], data_offsets: [i * 12, i * 12 + 12] };
  const file = safetensors(tensors, 72);
  const r = m.header(file.subarray(0, 8 + Number(new DataView(file.buffer).getBigUint64(0, true))), file.length);
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  assert.equal(r.tensors.length, 6);
  assert.equal(r.tensors[0].name, 'layer.0.wéight');
  assert.deepEqual(r.tensors[0].shape, [2, 3]);
  assert.equal(r.data_size, 72);
});

test('parse_safetensors_header() reports each malformed header with its code', async () => {
  const m = await wasm();
  assert.equal(m.header(new Uint8Array([1, 2, 3]), -1).error.code, 'safetensors_header_too_small');
  const file = safetensors({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] } }, 8);
  assert.equal(m.header(file.subarray(0, 12), file.length).error.code, 'safetensors_header_truncated');
  assert.equal(m.header(file, file.length + 1).error.code, 'safetensors_file_size_mismatch');
});

describe('supported() lists exactly what the api accepts', () => {
  const config = readFileSync(join(CONFIGS, 'gpt2.json'), 'utf8');
  /** An inference reply's error about `what`, if any. */
  const refused = (reply, what) => reply.error && new RegExp(what).test(reply.error.message) ? reply.error.message : '';

  test("the estimate's dtypes by mode: each mode's rows, and nothing else", async () => {
    const m = await wasm();
    const { dtypes } = m.supported();
    for (const mode of ['memfit', 'accelerate']) {
      const r = m.estimate({ config, name: 'gpt2', mode });
      assert.deepEqual(r.rows.map((x) => x.dtype), dtypes[mode], mode);
    }
    const other = dtypes.memfit.find((d) => !dtypes.accelerate.includes(d));
    assert.equal(m.estimate({ config, name: 'gpt2', mode: 'accelerate', dtypes: [other] }).error?.code, 'invalid_argument');
  });

  test('strategies: plan() takes each, and refuses another', async () => {
    const m = await wasm();
    const request = (strategy) => ({ config, name: 'gpt2', max_memory: { 0: '1GiB', cpu: '8GiB' }, strategy });
    for (const s of m.supported().strategies) assert.equal(refused(m.plan(request(s)), 'strategy'), '', s);
    assert.match(refused(m.plan(request('nope')), 'strategy'), /nope/);
  });

  test('plan() with nodes: one stage per host, errors as {code, message} naming the host', async () => {
    const m = await wasm();
    const r = m.plan({ config, name: 'gpt2', nodes: 'a=cpu:1GiB;b=cpu:1GiB', link: '10Gbps,50us' });
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.deepEqual(r.nodes.map((n) => n.name), ['a', 'b']);
    assert.equal(r.nodes[0].first_unit, 'transformer.wte');
    assert.equal(r.hidden, JSON.parse(config).n_embd);
    const twice = m.plan({ config, name: 'gpt2', nodes: 'a=cpu:1GiB;a=cpu:1GiB' });
    assert.equal(twice.error?.code, 'invalid_argument');
    assert.match(twice.error.message, /node 'a' is given twice/);
    const both = m.plan({ config, name: 'gpt2', nodes: 'a=cpu:1GiB', max_memory: { cpu: '1GiB' } });
    assert.match(both.error?.message ?? '', /exclude each other/);
  });

  test('weight dtypes, KV-cache dtypes, engines, training methods and optimizers: inference() takes each', async () => {
    const m = await wasm();
    const s = m.supported();
    const cases = [
      ...s.weight_dtypes.map((dtype) => [{ dtype }, 'dtype']),
      ...s.kv_dtypes.map((kv_dtype) => [{ kv_dtype }, 'kv-dtype|kv_dtype']),
      ...s.engines.map((engine) => [{ engine }, 'engine']),
      ...s.train_methods.map((method) => [{ train: { method } }, 'method']),
      ...s.optimizers.map((optimizer) => [{ train: { method: 'lora', optimizer } }, 'optimizer']),
    ];
    assert.ok(cases.length >= 20, `${cases.length} choices`);
    for (const [fields, what] of cases) {
      const reply = m.inference({ config, name: 'gpt2', context: 1024, ...fields });
      assert.equal(reply.error, undefined, `${JSON.stringify(fields)}: ${JSON.stringify(reply.error)}`);
    }
    assert.match(refused(m.inference({ config, name: 'gpt2', engine: 'nope' }), 'engine'), /nope/);
  });

  test('GPUs: each name and alias is the GPU of the catalogue', async () => {
    const m = await wasm();
    const { gpus } = m.supported();
    assert.ok(gpus.length >= 10);
    for (const g of gpus) {
      assert.ok(g.memory_bytes > 0 && g.aliases.length > 0, JSON.stringify(g));
      for (const gpu of [g.name, ...g.aliases]) {
        const fit = m.inference({ config, name: 'gpt2', context: 1024, gpu }).fit;
        assert.equal(fit?.gpu?.name, g.name, gpu);
      }
    }
  });
});

describe('the first module (memfit.wasm) and memfit-all.wasm', () => {
  // What the page's worker relies on (web/js/worker.js): the first module answers its families
  // (wasm/first_chunk.def) exactly as memfit-all does, and every other family with
  // unknown_model_type — the code that sends the worker for memfit-all — never with another error.
  test('every fixture config: the same reply, or unknown_model_type from the first', async () => {
    const first = await wasm('memfit.mjs');
    const all = await wasm();
    const keys = (/** @type {any} */ s) => new Set([...s.transformers, ...s.timm]);
    const known = keys(first.supported());
    assert.ok(known.size >= 5 && known.size < keys(all.supported()).size,
      `the first module knows ${known.size} model types`);
    let same = 0, deferred = 0;
    for (const f of readdirSync(CONFIGS).filter((n) => n.endsWith('.json'))) {
      const config = readFileSync(join(CONFIGS, f), 'utf8');
      const parsed = JSON.parse(config);
      const type = parsed.model_type ?? parsed.architecture;  // transformers, or timm
      const request = { config, name: f };
      const a = first.estimate(request);
      if (type && !known.has(type)) {
        assert.equal(a.error?.code, 'unknown_model_type', `${f}: ${JSON.stringify(a).slice(0, 200)}`);
        deferred += 1;
        continue;
      }
      assert.deepEqual(a, all.estimate(request), f);
      same += 1;
    }
    assert.ok(same > 0 && deferred > 0, `${same} answered by both, ${deferred} left to memfit-all`);
  });

  test('plans over several hosts: not_in_this_module from the first, answered by memfit-all', async () => {
    const first = await wasm('memfit.mjs');
    const config = readFileSync(join(CONFIGS, 'gpt2.json'), 'utf8');
    const request = { config, name: 'gpt2', nodes: 'a=cpu:1GiB;b=cpu:1GiB' };
    assert.equal(first.plan(request).error?.code, 'not_in_this_module');
    const all = await wasm();
    assert.deepEqual(all.plan(request).nodes.map((/** @type {any} */ n) => n.name), ['a', 'b']);
    // one host is the first module's own
    const one = { config, name: 'gpt2', max_memory: { cpu: '1GiB' } };
    assert.deepEqual(first.plan(one), all.plan(one));
  });
});
