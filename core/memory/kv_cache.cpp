#include "memfit/memory/kv_cache.h"

#include <algorithm>

#include <fmt/format.h>

#include "memfit/error.h"
#include "memfit/model/model_dims.h"

namespace memfit {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
std::int64_t pad_to(std::int64_t a, std::int64_t p) { return ceil_div(a, p) * p; }

// Which layers are windowed, and the window, from the text config (see kv_cache.h).
void mark_windows(const Config& c, AttentionLayout& out) {
  const auto n = out.layers.size();
  auto window_size = [&](const char* why) {
    if (c.has("sliding_window")) return c.dim({"sliding_window"});
    if (c.has("attention_chunk_size")) return c.dim({"attention_chunk_size"});
    throw Error(ErrorCode::kMissingKey,
                fmt::format("{}: {} marks windowed layers but 'sliding_window' is missing",
                            c.where(), why));
  };
  if (auto types = c.string_list({"layer_types"})) {
    if (types->size() != n)
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: 'layer_types' has {} entries for {} layers", c.where(),
                              types->size(), n));
    std::int64_t window = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::string& t = (*types)[i];
      if (t == "sliding_attention" || t == "chunked_attention") {
        if (window == 0) window = window_size("'layer_types'");
        out.layers[i].sliding = true;
        out.layers[i].window = window;
      } else if (t != "full_attention") {
        throw Error(ErrorCode::kInvalidValue,
                    fmt::format("{}: layer {} has type '{}'; memfit sizes the KV cache of "
                                "'full_attention', 'sliding_attention' and 'chunked_attention' "
                                "layers only", c.where(), i, t));
      }
    }
    out.window_rule = "layer_types";
    return;
  }
  const bool hybrid = c.string_or({"cache_implementation"}, "") == "hybrid";
  if (c.has("sliding_window_pattern") || hybrid) {
    // transformers' HybridCache: layer i is windowed unless (i + 1) % pattern == 0.
    const std::int64_t pattern = c.dim_or({"sliding_window_pattern"}, 2);
    const std::int64_t window = window_size("'sliding_window_pattern'");
    for (std::size_t i = 0; i < n; ++i)
      if ((static_cast<std::int64_t>(i) + 1) % pattern != 0) out.layers[i] = {true, window, out.layers[i].kv_heads};
    out.window_rule = c.has("sliding_window_pattern") ? "sliding_window_pattern"
                                                       : "cache_implementation: hybrid";
    return;
  }
  if (c.has("use_sliding_window") && !c.flag_or({"use_sliding_window"}, false)) return;
  if (!c.has("sliding_window") && !c.has("attention_chunk_size")) return;
  const std::int64_t window = window_size("'sliding_window'");
  // Qwen2: with use_sliding_window, layers from max_window_layers on are windowed.
  const std::int64_t first = c.flag_or({"use_sliding_window"}, false)
                                 ? c.count_or({"max_window_layers"}, 0)
                                 : 0;
  for (std::size_t i = static_cast<std::size_t>(std::min<std::int64_t>(first, static_cast<std::int64_t>(n))); i < n; ++i)
    out.layers[i] = {true, window, out.layers[i].kv_heads};
  out.window_rule = first > 0 ? "use_sliding_window + max_window_layers" : "sliding_window";
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

int AttentionLayout::sliding_layers() const {
  int n = 0;
  for (const auto& l : layers) n += l.sliding;
  return n;
}

AttentionLayout attention_layout(const Config& top) {
  const Config c = text_config(top);
  AttentionLayout out;
  const bool enc_dec = c.flag_or({"is_encoder_decoder"}, false) ||
                       c.has_any({"decoder_layers", "num_decoder_layers"});
  std::int64_t layers = 0, heads = 0, hidden = 0;
  if (enc_dec) {
    layers = c.dim({"decoder_layers", "num_decoder_layers", "num_layers", "num_hidden_layers"});
    heads = c.dim({"decoder_attention_heads", "num_heads", "num_attention_heads"});
    hidden = c.dim({"d_model", "hidden_size"});
  } else {
    layers = c.dim({"num_hidden_layers", "n_layer", "num_layers", "n_layers"});
    heads = c.dim({"num_attention_heads", "n_head", "num_heads", "n_heads"});
    hidden = c.dim({"hidden_size", "n_embd", "d_model", "dim"});
  }
  if (layers > 100'000)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: {} decoder layers is not a real model", c.where(), layers));
  std::int64_t head_dim = c.dim_or({"head_dim", "d_kv"}, 0);
  if (head_dim == 0) {
    if (hidden % heads != 0)
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: hidden size {} is not a multiple of the {} attention heads, and "
                              "there is no 'head_dim'", c.where(), hidden, heads));
    head_dim = hidden / heads;
  }
  out.k_head_dim = out.v_head_dim = head_dim;

  // Key/value heads per layer (same precedence as read_model_dims).
  std::vector<std::int64_t> kv(static_cast<std::size_t>(layers), heads);
  if (c.flag_or({"new_decoder_architecture"}, false)) {
    std::fill(kv.begin(), kv.end(), c.dim_or({"num_kv_heads"}, heads));
  } else if (auto it = c.json().find("num_key_value_heads"); it != c.json().end() && it->is_array()) {
    const auto list = *c.int_list({"num_key_value_heads"});
    if (list.size() != kv.size())
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: 'num_key_value_heads' lists {} layers, the model has {}",
                              c.where(), list.size(), layers));
    kv = list;  // 0 is a layer without attention (no cache)
  } else if (c.has("num_key_value_heads")) {
    std::fill(kv.begin(), kv.end(), c.dim({"num_key_value_heads"}));
  } else if (c.flag_or({"multi_query"}, false)) {
    std::fill(kv.begin(), kv.end(), 1);
  } else {
    std::fill(kv.begin(), kv.end(), c.dim_or({"n_head_kv", "num_kv_heads"}, heads));
  }
  for (std::int64_t h : kv) out.layers.push_back({false, 0, h});

  if (c.has("kv_lora_rank")) {
    // MLA: transformers caches K = heads × (qk_nope + qk_rope), V = heads × v_head_dim; vLLM and
    // llama.cpp cache the latent kv_lora_rank + qk_rope_head_dim once per token and layer.
    out.mla = true;
    const std::int64_t rope = c.dim({"qk_rope_head_dim"});
    out.mla_latent = c.dim({"kv_lora_rank"}) + rope;
    out.k_head_dim = c.dim({"qk_nope_head_dim"}) + rope;
    out.v_head_dim = c.dim({"v_head_dim"});
  }
  mark_windows(c, out);

  if (enc_dec) {
    out.cross_layers = layers;
    out.cross_kv_heads = heads;
    out.cross_head_dim = head_dim;
    out.default_encoder_length = c.count_or({"max_source_positions"}, 0);
  }
  return out;
}

KvCache kv_cache(const AttentionLayout& layout, const KvOptions& o) {
  if (o.context < 1 || o.batch < 1)
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("KV cache: context ({}) and batch ({}) must be at least 1", o.context, o.batch));
  const double b = kv_element_bytes(o.dtype, o.engine);
  const bool latent = layout.mla && o.engine != Engine::kTransformers;
  auto per_token = [&](const AttentionLayer& l) -> double {
    if (latent) return static_cast<double>(layout.mla_latent) * b;
    return static_cast<double>(l.kv_heads) *
           static_cast<double>(layout.k_head_dim + layout.v_head_dim) * b;
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
      case Engine::kVllm: {  // FullAttentionSpec / SlidingWindowSpec.max_memory_usage_bytes
        const std::int64_t bs = o.vllm_block_size;
        if (!l.sliding) return ceil_div(C, bs) * bs;
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
  for (const auto& l : layout.layers) {
    const double t = per_token(l);
    out.bytes_per_token += t;
    out.self_bytes += t * static_cast<double>(tokens(l)) * static_cast<double>(o.batch);
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
