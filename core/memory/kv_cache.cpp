#include "memfit/memory/kv_cache.h"

#include <algorithm>

#include <fmt/format.h>

#include "memfit/error.h"

namespace memfit {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
std::int64_t pad_to(std::int64_t a, std::int64_t p) { return ceil_div(a, p) * p; }

// The DSA indexer's own key cache, per token of a layer that runs its own indexer, beside the
// attention's cache. vLLM (DeepseekV32IndexerCache): the key in naive FP8, 1 byte per value plus
// a 4-byte scale per 128 values (uint8, whatever --kv-dtype). llama.cpp (llama_kv_cache_dsa's
// indexer cache, kv_lid: a second llama_kv_cache with one key head of indexer_head_size at the K
// cache's type; the model is MLA, so no V). transformers (GlmMoeDsaIndexer, which DeepSeek-V3.2
// reuses: `_cached_keys` [batch, tokens, index_head_dim], the activations' dtype, concatenated
// token by token).
double indexer_bytes_per_token(std::int64_t index_head_dim, Engine engine, double element_bytes) {
  if (index_head_dim <= 0) return 0;
  const double d = static_cast<double>(index_head_dim);
  if (engine == Engine::kVllm) return d + static_cast<double>(index_head_dim / 128 * 4);
  return d * element_bytes;
}

}  // namespace

double kv_element_bytes(KvDtype dtype, Engine engine) {
  switch (dtype) {
    case KvDtype::kF32: return 4;
    case KvDtype::kF16:
    case KvDtype::kBF16: return 2;
    case KvDtype::kF8: return 1;
    case KvDtype::kI8: return engine == Engine::kLlamaCpp ? 34.0 / 32.0 : 1;
  }
  return 2;
}

int AttentionLayout::count(AttentionKind kind) const {
  int n = 0;
  for (const auto& l : layers) n += l.kind == kind;
  return n;
}

int AttentionLayout::sliding_layers() const {
  int n = 0;
  for (const auto& l : layers) n += l.sliding;
  return n;
}

AttentionLayout attention_layout(const ModelDims& d) {
  if (d.attention_error) throw *d.attention_error;
  AttentionLayout out;
  for (const LayerDims& l : d.per_layer) {
    AttentionLayer a;
    a.kind = l.attention;
    a.sliding = l.windowed();
    a.window = l.windowed() ? l.window : 0;
    a.kv_heads = l.caches_tokens() ? l.kv_heads : 0;
    a.k_head_dim = l.k_head_dim;
    a.v_head_dim = l.v_head_dim;
    // Falcon-H1's layers run attention and an SSM side by side: a state on any kind of layer.
    a.state = l.state;
    a.index_head_dim = l.attention == AttentionKind::kMla ? l.mla.index_head_dim : 0;
    out.layers.push_back(a);
    if (l.attention == AttentionKind::kMla && !out.mla) {
      // MLA: transformers caches K = heads × (qk_nope + qk_rope), V = heads × v_head_dim; vLLM and
      // llama.cpp cache the latent kv_lora_rank + qk_rope_head_dim once per token and layer.
      out.mla = true;
      out.mla_latent = l.mla.latent();
    }
  }
  out.window_rule = d.window_rule;
  out.cross_layers = d.cross.layers;
  out.cross_kv_heads = d.cross.kv_heads;
  out.cross_head_dim = d.cross.head_dim;
  out.default_encoder_length = d.cross.default_encoder_length;
  return out;
}

AttentionLayout attention_layout(const Model& model) {
  const ModelDims* dims = model.dims.get();
  if (!dims)
    throw Error(ErrorCode::kInvalidArgument,
                "KV cache: the model has no transformer dimensions (not a transformers config)");
  return attention_layout(*dims);
}

KvCache kv_cache(const AttentionLayout& layout, const KvOptions& o) {
  if (o.context < 1 || o.batch < 1)
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("KV cache: context ({}) and batch ({}) must be at least 1", o.context, o.batch));
  const double b = kv_element_bytes(o.dtype, o.engine);
  const bool latent = layout.mla && o.engine != Engine::kTransformers;
  auto per_token = [&](const AttentionLayer& l) -> double {
    const double indexer = indexer_bytes_per_token(l.index_head_dim, o.engine, b);
    if (latent && l.kind == AttentionKind::kMla) return static_cast<double>(layout.mla_latent) * b + indexer;
    return static_cast<double>(l.kv_heads) * static_cast<double>(l.k_head_dim + l.v_head_dim) * b + indexer;
  };
  // Tokens one sequence holds in a layer, by engine.
  const std::int64_t C = o.context;
  std::int64_t llama_ctx_seq = 0, llama_ubatch = 0;
  if (o.engine == Engine::kLlamaCpp) {
    // llama_context: n_ctx = pad(n_ctx, 256); n_ctx_seq = pad(n_ctx / n_seq_max, 256) (one
    // stream per sequence, kv_unified = false); n_ubatch = min(n_batch = min(n_ctx, 2048), 512).
    const std::int64_t n_ctx = pad_to(C * o.batch, o.llamacpp_pad);
    llama_ctx_seq = pad_to(n_ctx / o.batch, o.llamacpp_pad);
    llama_ubatch = std::min({o.llamacpp_ubatch, n_ctx, std::int64_t{2048}});
  }
  auto tokens = [&](const AttentionLayer& l) -> std::int64_t {
    switch (o.engine) {
      case Engine::kTransformers:  // StaticSlidingWindowLayer: min(sliding_window, max_cache_len)
        return l.sliding ? std::min(l.window, C) : C;
      case Engine::kVllm: {  // FullAttentionSpec / SlidingWindowSpec / ChunkedLocalAttentionSpec
        const std::int64_t bs = o.vllm_block_size;
        if (!l.sliding) return ceil_div(C, bs) * bs;
        if (l.kind == AttentionKind::kChunked)  // one chunk plus the tokens scheduled in a step
          return ceil_div(std::min(l.window + o.vllm_max_num_batched_tokens, C), bs) * bs;
        const std::int64_t n = std::min(l.window - 1 + o.vllm_max_num_batched_tokens, C);
        return (ceil_div(n, bs) + 1) * bs;
      }
      case Engine::kLlamaCpp:  // llama_kv_cache_iswa: pad(min(size_base, n_swa + n_ubatch), 256)
        return l.sliding ? pad_to(std::min(llama_ctx_seq, l.window + llama_ubatch), o.llamacpp_pad)
                         : llama_ctx_seq;
    }
    return C;
  };
  KvCache out;
  const double batch = static_cast<double>(o.batch);
  const double state_b = o.engine == Engine::kLlamaCpp ? 4.0 : o.state_element_bytes;
  // transformers keeps conv_kernel columns of conv state (it pads before storing); vLLM
  // (MambaStateShapeCalculator) and llama.cpp (d_conv − 1) keep the window before the new token.
  auto state_bytes = [&](const RecurrentDims& r) {
    double conv = static_cast<double>(r.conv_state);
    if (o.engine != Engine::kTransformers && r.conv_kernel > 0)
      conv = conv / static_cast<double>(r.conv_kernel) * static_cast<double>(r.conv_kernel - 1);
    return (conv * state_b + static_cast<double>(r.ssm_state) * (r.ssm_f32 ? 4.0 : state_b)) * batch;
  };
  for (const auto& l : layout.layers) {
    const double state = state_bytes(l.state);
    out.state_bytes += state;
    double cached = 0;
    if (l.kind != AttentionKind::kRecurrent) {
      const double t = per_token(l);
      out.bytes_per_token += t;
      cached = t * static_cast<double>(tokens(l)) * batch;
      out.self_bytes += cached;
    }
    out.layer_bytes.push_back(cached + state);
  }
  if (layout.cross_layers > 0) {
    std::int64_t enc = o.encoder_length > 0            ? o.encoder_length
                       : layout.default_encoder_length > 0 ? layout.default_encoder_length
                                                           : C;
    out.encoder_length = enc;
    if (o.engine == Engine::kVllm) enc = ceil_div(enc, o.vllm_block_size) * o.vllm_block_size;
    out.cross_bytes = static_cast<double>(layout.cross_layers) * 2.0 *
                      static_cast<double>(layout.cross_kv_heads * layout.cross_head_dim) * b *
                      static_cast<double>(enc) * static_cast<double>(o.batch);
  }
  return out;
}

}  // namespace memfit
