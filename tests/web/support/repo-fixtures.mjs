// Hub repos of each kind that is not one transformers/timm model (memfit/repo/repo_kind.h), for
// the mock Hub: a GGUF repo (three quantizations of a 13B-shaped llama), a diffusers pipeline, a
// sentence-transformers model and a PEFT LoRA adapter of memfit-test/tiny-llama. Large files are
// "sparse": only their leading bytes (the header) are held, the rest reads as zeros — the page
// and the CLI read headers only, by Range, so a 26 GB file costs a few hundred KB here.
import { T, ggufHeader, tensor } from './gguf-writer.mjs';

/** A file of `size` bytes whose first bytes are `head`, the rest zeros. */
export class Sparse {
  /** @param {Buffer} head @param {number} size */
  constructor(head, size) {
    this.head = head;
    this.size = size;
  }

  /** Bytes [first, last]. @param {number} first @param {number} last */
  slice(first, last) {
    const out = Buffer.alloc(last - first + 1);
    if (first < this.head.length) this.head.copy(out, 0, first, Math.min(this.head.length, last + 1));
    return out;
  }
}

const BYTES = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I8: 1, U8: 1 };

/**
 * A safetensors file: tensors [name, dtype, shape] laid out in order, the header padded with
 * spaces to 8 bytes (as the safetensors crate writes it).
 * @param {[string, string, number[]][]} tensors @param {Object<string, string>} [metadata]
 */
export function safetensors(tensors, metadata) {
  const header = metadata ? { __metadata__: metadata } : {};
  let at = 0;
  for (const [name, dtype, shape] of tensors) {
    const n = shape.reduce((a, b) => a * b, 1) * BYTES[dtype];
    header[name] = { dtype, shape, data_offsets: [at, at + n] };
    at += n;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const head = Buffer.alloc(8 + json.length);
  head.writeBigUInt64LE(BigInt(json.length), 0);
  head.write(json, 8, 'utf8');
  return new Sparse(head, head.length + at);
}

const json = (/** @type {any} */ v) => Buffer.from(JSON.stringify(v, null, 2));

// ---- GGUF: a llama of 13B's shape (Llama-2-13b: 40 layers, 5120 wide, 40 heads, FFN 13824) ----

/** The shape of the GGUF model, for tests that compute its sizes themselves. */
export const GGUF_SHAPE = { layers: 40, embd: 5120, heads: 40, kvHeads: 40, ff: 13824, vocab: 32000, context: 4096 };
/** The repo's quantizations: file name → ggml type of the matrices (norms stay f32). */
export const GGUF_QUANTS = { 'llama-13b.Q4_K_M.gguf': 12, 'llama-13b.Q8_0.gguf': 8, 'llama-13b.F16.gguf': 1 };

/** The first GGUF read core asks for (docs/api.md: a need's `bytes`); the fixtures' headers are longer. */
export const GGUF_FIRST_READ = 1 << 20;

/** One quantization of the model, with a vocabulary in its metadata (a header of ~1.4 MB). */
function llamaGguf(/** @type {number} */ type) {
  const s = GGUF_SHAPE;
  const tokens = Array.from({ length: s.vocab }, (_, i) => `${'t'.repeat(32)}${String(i).padStart(5, '0')}`);
  const kv = [
    ['general.architecture', T.STR, 'llama'], ['general.name', T.STR, 'memfit test llama 13B'],
    ['general.file_type', T.U32, type === 1 ? 1 : type === 8 ? 7 : 15],
    ['llama.block_count', T.U32, s.layers], ['llama.context_length', T.U32, s.context],
    ['llama.embedding_length', T.U32, s.embd], ['llama.feed_forward_length', T.U32, s.ff],
    ['llama.attention.head_count', T.U32, s.heads], ['llama.attention.head_count_kv', T.U32, s.kvHeads],
    ['llama.rope.freq_base', T.F32, 10000], ['llama.attention.layer_norm_rms_epsilon', T.F32, 1e-5],
    ['tokenizer.ggml.model', T.STR, 'llama'], ['tokenizer.ggml.tokens', T.ARR, tokens, { type: T.STR }],
  ];
  const tensors = [tensor('token_embd.weight', [s.embd, s.vocab], type)];
  for (let i = 0; i < s.layers; i++) {
    const p = `blk.${i}.`;
    tensors.push(tensor(`${p}attn_norm.weight`, [s.embd], 0), tensor(`${p}attn_q.weight`, [s.embd, s.embd], type),
      tensor(`${p}attn_k.weight`, [s.embd, s.embd], type), tensor(`${p}attn_v.weight`, [s.embd, s.embd], type),
      tensor(`${p}attn_output.weight`, [s.embd, s.embd], type), tensor(`${p}ffn_norm.weight`, [s.embd], 0),
      tensor(`${p}ffn_gate.weight`, [s.embd, s.ff], type), tensor(`${p}ffn_up.weight`, [s.embd, s.ff], type),
      tensor(`${p}ffn_down.weight`, [s.ff, s.embd], type));
  }
  tensors.push(tensor('output_norm.weight', [s.embd], 0), tensor('output.weight', [s.embd, s.vocab], type));
  const { head, size } = ggufHeader({ version: 3, kv, tensors });
  return new Sparse(head, size);
}

function ggufRepo() {
  const files = new Map([['README.md', Buffer.from('# llama 13B, GGUF\n')]]);
  for (const [name, type] of Object.entries(GGUF_QUANTS)) files.set(name, llamaGguf(type));
  return { library: 'gguf', files };
}

// ---- diffusers: a Stable-Diffusion-shaped pipeline (text encoder, UNet, VAE; a few tensors each) ----

function diffusersRepo() {
  const files = new Map();
  files.set('model_index.json', json({
    _class_name: 'StableDiffusionPipeline', _diffusers_version: '0.30.0',
    feature_extractor: [null, null], safety_checker: [null, null], requires_safety_checker: false,
    scheduler: ['diffusers', 'PNDMScheduler'], text_encoder: ['transformers', 'CLIPTextModel'],
    tokenizer: ['transformers', 'CLIPTokenizer'], unet: ['diffusers', 'UNet2DConditionModel'], vae: ['diffusers', 'AutoencoderKL'],
  }));
  files.set('scheduler/scheduler_config.json', json({ _class_name: 'PNDMScheduler', num_train_timesteps: 1000 }));
  files.set('tokenizer/vocab.json', json({ a: 0 }));
  files.set('text_encoder/config.json', json({
    architectures: ['CLIPTextModel'], model_type: 'clip_text_model', hidden_size: 768, intermediate_size: 3072,
    num_attention_heads: 12, num_hidden_layers: 12, vocab_size: 49408, max_position_embeddings: 77, torch_dtype: 'float32',
  }));
  files.set('text_encoder/model.safetensors', safetensors([
    ['text_model.embeddings.token_embedding.weight', 'F32', [49408, 768]],
    ['text_model.embeddings.position_embedding.weight', 'F32', [77, 768]],
    ['text_model.encoder.layers.0.mlp.fc1.weight', 'F32', [3072, 768]],
    ['text_model.final_layer_norm.weight', 'F32', [768]],
  ]));
  files.set('unet/config.json', json({
    _class_name: 'UNet2DConditionModel', _diffusers_version: '0.30.0', in_channels: 4, out_channels: 4,
    sample_size: 64, cross_attention_dim: 768, block_out_channels: [320, 640, 1280, 1280], layers_per_block: 2,
  }));
  files.set('unet/diffusion_pytorch_model.safetensors', safetensors([
    ['conv_in.weight', 'F32', [320, 4, 3, 3]], ['conv_in.bias', 'F32', [320]],
    ['mid_block.attentions.0.proj_in.weight', 'F32', [1280, 1280]],
    ['down_blocks.3.resnets.0.conv1.weight', 'F32', [1280, 1280, 3, 3]],
    ['conv_out.weight', 'F32', [4, 320, 3, 3]],
  ]));
  files.set('vae/config.json', json({
    _class_name: 'AutoencoderKL', _diffusers_version: '0.30.0', in_channels: 3, out_channels: 3, latent_channels: 4,
    block_out_channels: [128, 256, 512, 512], sample_size: 512,
  }));
  files.set('vae/diffusion_pytorch_model.safetensors', safetensors([
    ['encoder.conv_in.weight', 'F32', [128, 3, 3, 3]], ['decoder.up_blocks.0.resnets.0.conv1.weight', 'F32', [512, 512, 3, 3]],
    ['decoder.conv_out.weight', 'F32', [3, 128, 3, 3]],
  ]));
  return { library: 'diffusers', files };
}

// ---- sentence-transformers: a MiniLM-shaped BERT (6 layers, 384 wide) + mean pooling ----

function sentenceTransformersRepo() {
  const h = 384, layers = 6, ff = 1536, vocab = 30522;
  const files = new Map();
  files.set('modules.json', json([
    { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
    { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
    { idx: 2, name: '2', path: '2_Normalize', type: 'sentence_transformers.models.Normalize' },
  ]));
  files.set('sentence_bert_config.json', json({ max_seq_length: 256, do_lower_case: false }));
  files.set('config_sentence_transformers.json', json({ __version__: { sentence_transformers: '3.0.1' }, prompts: {}, similarity_fn_name: 'cosine' }));
  files.set('1_Pooling/config.json', json({ word_embedding_dimension: h, pooling_mode_cls_token: false, pooling_mode_mean_tokens: true }));
  files.set('config.json', json({
    architectures: ['BertModel'], model_type: 'bert', hidden_size: h, intermediate_size: ff, num_attention_heads: 12,
    num_hidden_layers: layers, vocab_size: vocab, max_position_embeddings: 512, type_vocab_size: 2,
    hidden_act: 'gelu', layer_norm_eps: 1e-12, torch_dtype: 'float32',
  }));
  const t = [['embeddings.word_embeddings.weight', 'F32', [vocab, h]], ['embeddings.position_embeddings.weight', 'F32', [512, h]],
    ['embeddings.token_type_embeddings.weight', 'F32', [2, h]], ['embeddings.LayerNorm.weight', 'F32', [h]], ['embeddings.LayerNorm.bias', 'F32', [h]]];
  for (let i = 0; i < layers; i++) {
    const p = `encoder.layer.${i}.`;
    for (const m of ['query', 'key', 'value']) t.push([`${p}attention.self.${m}.weight`, 'F32', [h, h]], [`${p}attention.self.${m}.bias`, 'F32', [h]]);
    t.push([`${p}attention.output.dense.weight`, 'F32', [h, h]], [`${p}attention.output.dense.bias`, 'F32', [h]],
      [`${p}attention.output.LayerNorm.weight`, 'F32', [h]], [`${p}attention.output.LayerNorm.bias`, 'F32', [h]],
      [`${p}intermediate.dense.weight`, 'F32', [ff, h]], [`${p}intermediate.dense.bias`, 'F32', [ff]],
      [`${p}output.dense.weight`, 'F32', [h, ff]], [`${p}output.dense.bias`, 'F32', [h]],
      [`${p}output.LayerNorm.weight`, 'F32', [h]], [`${p}output.LayerNorm.bias`, 'F32', [h]]);
  }
  t.push(['pooler.dense.weight', 'F32', [h, h]], ['pooler.dense.bias', 'F32', [h]]);
  files.set('model.safetensors', safetensors(t));
  return { library: 'sentence-transformers', files };
}

// ---- PEFT: a LoRA adapter (r 8 on q_proj and v_proj) of memfit-test/tiny-llama ----

/** The adapter's base (a mock repo with config.json and model.safetensors) and its LoRA. */
export const PEFT_BASE = 'memfit-test/tiny-llama';
export const LORA = { r: 8, alpha: 16, targets: ['q_proj', 'v_proj'] };

/** @param {any} base tiny-llama's config.json */
function peftRepo(base) {
  const hd = base.hidden_size / base.num_attention_heads;
  const out = { q_proj: base.num_attention_heads * hd, v_proj: base.num_key_value_heads * hd };
  const t = [];
  for (let i = 0; i < base.num_hidden_layers; i++) {
    for (const m of LORA.targets) {
      const p = `base_model.model.model.layers.${i}.self_attn.${m}.`;
      t.push([`${p}lora_A.weight`, 'F32', [LORA.r, base.hidden_size]], [`${p}lora_B.weight`, 'F32', [out[m], LORA.r]]);
    }
  }
  const files = new Map();
  files.set('adapter_config.json', json({
    base_model_name_or_path: PEFT_BASE, peft_type: 'LORA', task_type: 'CAUSAL_LM', r: LORA.r, lora_alpha: LORA.alpha,
    lora_dropout: 0.05, target_modules: LORA.targets, bias: 'none', inference_mode: true, fan_in_fan_out: false,
  }));
  files.set('adapter_model.safetensors', safetensors(t));
  return { library: 'peft', files };
}

/**
 * The repos, by id. @param {any} tinyLlamaConfig the base's config.json (parsed), or null when
 * the reference data is missing (no PEFT repo then)
 */
export function kindRepos(tinyLlamaConfig) {
  const repos = new Map([
    ['memfit-test/llama-13b-gguf', ggufRepo()],
    ['memfit-test/tiny-diffusers', diffusersRepo()],
    ['memfit-test/minilm-sentence-transformers', sentenceTransformersRepo()],
  ]);
  if (tinyLlamaConfig) repos.set('memfit-test/tiny-llama-lora', peftRepo(tinyLlamaConfig));
  return repos;
}
