// web/js/state.js under node: the URL form of the page's state (the share link) and the
// model-input rules. From the built site: state.js imports supported.js, which the build writes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { WEB_DIR, need } from './support/paths.mjs';

const { DEFAULTS, isRepoId, parseModelInput, queryFromState, requestDtypes, stateFromQuery } =
  await import(pathToFileURL(need(join(WEB_DIR, 'js/state.js'), 'the built site (web/tools/build.mjs)')).href);

test('defaults write an empty query, and an empty query reads the defaults', () => {
  assert.equal(queryFromState(DEFAULTS), '');
  assert.deepEqual(stateFromQuery(''), DEFAULTS);
});

test('a state survives the round trip through its query', () => {
  const s = { ...DEFAULTS, model: 'meta-llama/Meta-Llama-3-70B', revision: 'refs/pr/1', library: 'transformers',
    mode: 'memfit', source: 'exact', dtypes: ['float16', 'int4'], cls: 'LlamaModel', endpoint: 'http://127.0.0.1:1234',
    offline: true, gpu: 'h100', gpus: 4, cpu: 256, disk: false, strategy: 'balanced', pdtype: 'bfloat16',
    context: 32768, batch: 8, kv: 'float8', rdtype: 'int4', engine: 'vllm', train: 'lora', rank: 64,
    targets: 'q_proj,v_proj', optimizer: 'adamw8bit', gc: true, rgpu: 'a100' };
  assert.deepEqual(stateFromQuery(queryFromState(s)), s);
});

test('invalid values in a link fall back to the defaults', () => {
  const s = stateFromQuery('mode=evil&gpus=-3&context=abc&strategy=<x>&dtypes=float16,bogus&library=jax&kv=fp3');
  assert.equal(s.mode, 'memfit');
  assert.equal(s.gpus, DEFAULTS.gpus);
  assert.equal(s.context, DEFAULTS.context);
  assert.equal(s.strategy, 'auto');
  assert.deepEqual(s.dtypes, ['float16']);
  assert.equal(s.library, 'auto');
  assert.equal(s.kv, '');
});

test('accelerate mode has no exact source (the CLI reads headers in memfit mode only)', () => {
  assert.equal(stateFromQuery('mode=accelerate&source=exact').source, 'config');
});

test('requestDtypes: null for the mode default list', () => {
  assert.equal(requestDtypes({ ...DEFAULTS, dtypes: ['float32', 'float16', 'bfloat16', 'int8', 'int4'] }), null);
  assert.equal(requestDtypes({ ...DEFAULTS, mode: 'accelerate', dtypes: ['float32', 'float16', 'int8', 'int4'] }), null);
  assert.deepEqual(requestDtypes({ ...DEFAULTS, dtypes: ['int4'] }), ['int4']);
});

test('model ids and Hub URLs', () => {
  assert.deepEqual(parseModelInput(' gpt2 '), { id: 'gpt2' });
  assert.deepEqual(parseModelInput('meta-llama/Llama-2-7b-hf'), { id: 'meta-llama/Llama-2-7b-hf' });
  assert.deepEqual(parseModelInput('https://huggingface.co/meta-llama/Llama-2-7b-hf'), { id: 'meta-llama/Llama-2-7b-hf' });
  assert.deepEqual(parseModelInput('huggingface.co/Qwen/Qwen2-7B/tree/v1.0'), { id: 'Qwen/Qwen2-7B', revision: 'v1.0' });
  assert.deepEqual(parseModelInput('https://hf.co/openai/whisper-tiny/blob/main/config.json'), { id: 'openai/whisper-tiny', revision: 'main' });
  assert.equal(parseModelInput(''), null);
  assert.equal(parseModelInput('<img src=x onerror=alert(1)>'), null);
  assert.equal(parseModelInput('javascript:alert(1)'), null);
  assert.equal(parseModelInput('a/b/c'), null);
  assert.equal(isRepoId('org/../x'), false);
  assert.equal(isRepoId('x'.repeat(201)), false);
});
