// @ts-check
// "Will it run?" for one model: the inference request (docs/api.md, core/api/api_inference.cpp)
// built from a model request and run-panel state, and the reply's answer in one line. Shared by
// the page's run panel (run-panel.js) and the widget (embed.js).

import { convertBytes, withCommas } from './format.js';

/** @typedef {import('./state.js').State} State */

/** The inference request for a model request and the panel's state. @param {any} model @param {State} s */
export function inferenceRequest(model, s) {
  const { dtypes, ...fields } = model;
  /** @type {any} */
  const req = { ...fields, batch: s.batch, engine: s.engine, gpu: s.rgpu };
  if (s.context > 0) req.context = s.context;
  if (s.kv) req.kv_dtype = s.kv;
  if (s.rdtype) req.dtype = s.rdtype;
  if (s.train !== 'none') {
    req.train = { method: s.train, optimizer: s.optimizer, grad_checkpointing: s.gc };
    if (s.train !== 'full') {
      req.train.rank = s.rank;
      if (s.targets) req.train.targets = s.targets;
    }
  }
  return req;
}

/** The parts of an inference total: reply key, label. */
export const INFERENCE_PARTS = [
  ['weights_bytes', 'weights'], ['kv_cache_bytes', 'KV cache'], ['activation_bytes', 'activations'],
  ['overhead_bytes', 'overhead'],
];

/**
 * The inference reply's answer in one line: "Fits NVIDIA RTX 4090 (24.0 GB) at 4,096 tokens:
 * 15.2 GB of 24.0 GB (weights 13.5 GB + KV cache 512.0 MB + …)", or what does not fit and what
 * would. Empty without a fit (no GPU) or an inference part (training).
 * @param {any} reply
 */
export function fitLine(reply) {
  const fit = reply && reply.fit;
  const i = reply && reply.inference;
  if (!fit || !i || fit.for === 'training') return '';
  const gpu = fit.gpu && fit.gpu.name ? `${fit.gpu.name} (${convertBytes(fit.gpu.memory_bytes)})` : `${convertBytes(fit.vram_bytes)} of GPU memory`;
  const parts = INFERENCE_PARTS.filter(([k]) => typeof i[k] === 'number' && i[k] > 0)
    .map(([k, label]) => `${label} ${convertBytes(i[k])}`).join(' + ');
  const usable = `${convertBytes(fit.usable_bytes)}${fit.usable_bytes !== fit.vram_bytes ? ' usable' : ''}`;
  const at = `at ${withCommas(i.context)} token${i.context === 1 ? '' : 's'}${i.batch > 1 ? ` × batch ${i.batch}` : ''}`;
  let line = `${fit.fits ? 'Fits' : 'Does not fit'} ${gpu} ${at}: ${convertBytes(i.total_bytes)} of ${usable} (${parts})`;
  if (!fit.fits) {
    if (typeof fit.max_context === 'number' && fit.max_context > 0) line += `; fits up to ${withCommas(fit.max_context)} tokens`;
    if (typeof fit.gpus_needed === 'number' && fit.gpus_needed > 1) line += `; needs ${fit.gpus_needed} of them`;
  }
  return line;
}
