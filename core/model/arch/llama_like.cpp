#include "llama_like.h"

#include <algorithm>

#include <fmt/format.h>

#include "dec_common.h"
#include "family_dims.h"

namespace memfit::arch {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// torch.arange(0, dim, 2) has ceil(dim / 2) elements; the caches are cat(freqs, freqs).
std::int64_t half_up(std::int64_t dim) { return (dim + 1) / 2; }

}  // namespace

DecoderDims read_decoder_dims(const Config& c, const DecoderDefaults& def) {
  DecoderDims d;
  d.vocab = c.dim_or({"vocab_size"}, def.vocab);
  d.hidden = c.dim_or({"hidden_size"}, def.hidden);
  d.inter = c.dim_or({"intermediate_size"}, def.inter);
  d.layers = c.repeats_or({"num_hidden_layers"}, def.layers);
  d.heads = c.dim_or({"num_attention_heads"}, def.heads);
  const auto kv = c.json().find("num_key_value_heads");
  if (kv != c.json().end() && kv->is_null()) d.kv_heads = d.heads;
  else d.kv_heads = c.dim_or({"num_key_value_heads"}, def.kv_heads > 0 ? def.kv_heads : d.heads);
  if (def.head_dim > 0) d.head_dim = c.dim_or({"head_dim"}, def.head_dim);
  else d.head_dim = head_dim(c, d.hidden, d.heads);
  d.positions = c.dim_or({"max_position_embeddings"}, def.positions);
  d.tie = c.flag_or({"tie_word_embeddings"}, def.tie);
  d.act = c.string_or({"hidden_act"}, "silu");
  d.norm_eps = read_norm_eps(c, {"rms_norm_eps"}, 1e-6);
  d.rope_dim = d.head_dim;
  // Current transformers: dim = int(head_dim * partial_rotary_factor).
  const double factor = rope_number(c, "partial_rotary_factor", 1.0);
  if (!(factor > 0.0 && factor <= 1.0))
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: 'partial_rotary_factor' must be in (0, 1], got {}", c.where(),
                            factor));
  d.current_rope_dim = static_cast<std::int64_t>(static_cast<double>(d.head_dim) * factor);
  return d;
}

std::string llama_rope_class(const Config& c, std::string_view prefix) {
  return dec::rotary_class(c, prefix);
}

void decoder_norm(TreeBuilder& b, std::string_view name, const LlamaLikeSpec& s,
                  std::int64_t dim) {
  switch (s.norm) {
    case NormKind::kRms: nn::rms_norm(b, name, dim, s.norm_class); break;
    case NormKind::kLayerNorm: nn::layer_norm(b, name, dim, true, s.norm_class); break;
    case NormKind::kParamFree: {
      auto m = b.module(name, s.norm_class);
      break;
    }
  }
}

void layer_rotary(TreeBuilder& b, const LlamaLikeSpec& s, std::int64_t rope_dim,
                  std::int64_t positions) {
  // inv_freq registered as None: a module without tensors, gone from current transformers.
  if (s.rope == LegacyRope::kNone) return b.stateless("rotary_emb", s.rope_class, s.rope_era);
  auto m = b.module("rotary_emb", s.rope_class);
  const bool underscore = s.rope == LegacyRope::kUnderscore;
  b.buffer("inv_freq", {half_up(rope_dim)}, DType::kF32, false, s.rope_era);
  b.buffer(underscore ? "_cos_cached" : "cos_cached", {positions, 2 * half_up(rope_dim)},
           DType::kF32, false, s.rope_era);
  b.buffer(underscore ? "_sin_cached" : "sin_cached", {positions, 2 * half_up(rope_dim)},
           DType::kF32, false, s.rope_era);
}

void qk_norms(TreeBuilder& b, const LlamaLikeSpec& s, const DecoderDims& d) {
  switch (s.qk_norm_shape) {
    case QkNormShape::kHead:
      decoder_norm(b, "q_norm", s, d.head_dim);
      decoder_norm(b, "k_norm", s, d.head_dim);
      break;
    case QkNormShape::kAllHeads:
      decoder_norm(b, "q_norm", s, d.heads * d.head_dim);
      decoder_norm(b, "k_norm", s, d.kv_heads * d.head_dim);
      break;
    case QkNormShape::kHeadsByDim:
      for (const auto& [name, heads] : {std::pair{"q_norm", d.heads}, std::pair{"k_norm", d.kv_heads}}) {
        auto m = b.module(name, s.norm_class);
        b.param("weight", {heads, d.head_dim});
      }
      break;
  }
}

void decoder_attention(TreeBuilder& b, const LlamaLikeSpec& s, const DecoderDims& d) {
  auto attn = b.module("self_attn", s.prefix + "Attention");
  const std::int64_t q = d.heads * d.head_dim;
  const std::int64_t kv = d.kv_heads * d.head_dim;
  if (s.fused_qkv) {
    nn::linear(b, "o_proj", q, d.hidden, d.o_bias);
    nn::linear(b, "qkv_proj", d.hidden, q + 2 * kv, d.q_bias);
  } else {
    nn::linear(b, "q_proj", d.hidden, q, d.q_bias);
    nn::linear(b, "k_proj", d.hidden, kv, d.k_bias);
    nn::linear(b, "v_proj", d.hidden, kv, d.v_bias);
    nn::linear(b, "o_proj", q, d.hidden, d.o_bias);
  }
  if (s.qk_norm) qk_norms(b, s, d);
  if (!s.rope_class.empty()) layer_rotary(b, s, d.rope_dim, d.positions);
}

namespace {

void gated_mlp_members(TreeBuilder& b, std::int64_t hidden, std::int64_t inter, bool bias,
                       std::string_view act) {
  nn::linear(b, "gate_proj", hidden, inter, bias);
  nn::linear(b, "up_proj", hidden, inter, bias);
  nn::linear(b, "down_proj", inter, hidden, bias);
  nn::activation(b, "act_fn", act);
}

}  // namespace

void gated_mlp(TreeBuilder& b, std::string_view name, std::string_view cls, std::int64_t hidden,
               std::int64_t inter, bool bias, std::string_view act) {
  auto m = b.module(name, cls);
  gated_mlp_members(b, hidden, inter, bias, act);
}

void gateless_mlp_members(TreeBuilder& b, std::int64_t hidden, std::int64_t inter, bool bias, std::string_view act) {
  nn::linear(b, "up_proj", hidden, inter, bias);
  nn::linear(b, "down_proj", inter, hidden, bias);
  nn::activation(b, "act_fn", act);
}

void gateless_mlp(TreeBuilder& b, std::string_view name, std::string_view cls, std::int64_t hidden,
                  std::int64_t inter, bool bias, std::string_view act) {
  auto m = b.module(name, cls);
  gateless_mlp_members(b, hidden, inter, bias, act);
}

void gated_experts(TreeBuilder& b, std::string_view cls, std::int64_t n, std::int64_t hidden,
                   std::int64_t width, bool bias, std::string_view act) {
  auto list = b.module("experts", "ModuleList");
  if (n < 1) return;
  auto experts = b.repeated("0", cls, n);
  gated_mlp_members(b, hidden, width, bias, act);
}

void mixtral_experts(TreeBuilder& b, std::string_view cls, std::int64_t n, std::int64_t hidden,
                     std::int64_t width, std::string_view act) {
  auto list = b.module("experts", "ModuleList");
  if (n < 1) return;
  auto experts = b.repeated("0", cls, n);
  nn::linear(b, "w1", hidden, width, false);
  nn::linear(b, "w2", width, hidden, false);
  nn::linear(b, "w3", hidden, width, false);
  nn::activation(b, "act_fn", act);
}

void fused_gated_mlp(TreeBuilder& b, std::string_view name, std::string_view cls,
                     std::int64_t hidden, std::int64_t inter, std::string_view act) {
  auto m = b.module(name, cls);
  nn::linear(b, "gate_up_proj", hidden, 2 * inter, false);
  nn::linear(b, "down_proj", inter, hidden, false);
  nn::activation(b, "activation_fn", act);
}

void decoder_base(TreeBuilder& b, const LlamaLikeSpec& s, const DecoderDims& d, const LayerFn& mlp,
                  const LayerFn& attention, const LayerFn& tail) {
  {
    auto e = b.module("embed_tokens", s.embedding_class);
    b.param("weight", {d.vocab, d.hidden});
    if (s.embed_scale_buffer) b.buffer("embed_scale", {}, DType::kF32, false, BufferEra::kCurrentOnly);
  }
  if (!s.embed_dropout.empty()) nn::dropout(b, s.embed_dropout);
  {
    auto layers = b.module("layers", "ModuleList");
    for (std::int64_t i = 0; i < d.layers; ++i) {
      auto layer = b.item(i, s.prefix + "DecoderLayer");
      if (attention) attention(b, i);
      else decoder_attention(b, s, d);
      mlp(b, i);
      if (s.input_norm) decoder_norm(b, "input_layernorm", s, d.hidden);
      for (const auto& name : s.layer_dropouts) nn::dropout(b, name);
      if (s.post_attention_norm) decoder_norm(b, "post_attention_layernorm", s, d.hidden);
      for (const auto& name : s.extra_layer_norms) decoder_norm(b, name, s, d.hidden);
      if (tail) tail(b, i);
    }
  }
  decoder_norm(b, "norm", s, d.hidden);
  if (s.current_rotary) {
    auto r = b.module("rotary_emb", s.prefix + "RotaryEmbedding");
    b.buffer("inv_freq", {half_up(d.current_rope_dim)}, DType::kF32, false,
             BufferEra::kCurrentOnly);
  }
  if (s.local_rotary) {
    auto r = b.module("rotary_emb_local", s.prefix + "RotaryEmbedding");
    b.buffer("inv_freq", {half_up(d.current_rope_dim)}, DType::kF32, false, BufferEra::kCurrentOnly);
  }
}

std::vector<bool> qwen_moe_layers(const Config& c, std::int64_t layers, std::int64_t experts) {
  const std::int64_t sparse_step = c.dim_or({"decoder_sparse_step"}, 1);
  const std::vector<std::int64_t> mlp_only =
      c.int_list({"mlp_only_layers"}).value_or(std::vector<std::int64_t>{});
  std::vector<bool> sparse(static_cast<std::size_t>(layers));
  for (std::int64_t i = 0; i < layers; ++i)
    sparse[static_cast<std::size_t>(i)] = std::find(mlp_only.begin(), mlp_only.end(), i) == mlp_only.end() &&
                                         experts > 0 && (i + 1) % sparse_step == 0;
  return sparse;
}

void qwen_sparse_moe(TreeBuilder& b, std::string_view prefix, const DecoderDims& d,
                     std::int64_t experts, std::int64_t moe_inter, std::int64_t shared_inter) {
  const std::string mlp_class = std::string(prefix) + "MLP";
  auto moe = b.module("mlp", std::string(prefix) + "SparseMoeBlock");
  nn::linear(b, "gate", d.hidden, experts, false);
  gated_experts(b, mlp_class, experts, d.hidden, moe_inter, false, d.act);
  gated_mlp(b, "shared_expert", mlp_class, d.hidden, shared_inter, false, d.act);
  nn::linear(b, "shared_expert_gate", d.hidden, 1, false);
}

ModelDims uniform_decoder_dims(const DecoderDims& d, const RopeDims& rope) {
  return uniform_layer_dims({d.hidden, d.vocab, d.layers, d.heads, d.kv_heads, d.head_dim, d.inter, d.positions,
                             d.tie, d.norm_eps},
                            rope);
}

ModelDims decoder_model_dims(const Config& c, const DecoderDims& d, const RopeDims& rope) {
  return uniform_model_dims(c, {d.hidden, d.vocab, d.layers, d.heads, d.kv_heads, d.head_dim,
                                d.inter, d.positions, d.tie, d.norm_eps},
                            rope);
}

namespace {

TensorTree decoder_tree(const Config& c, std::string_view class_name, const LlamaLikeSpec& s,
                        const DecoderDims& d, const LayerFn& mlp, const LayerFn& attention,
                        const LayerFn& tail) {
  TreeBuilder b{std::string(class_name)};
  b.set_no_split({s.prefix + "DecoderLayer"});
  const std::string base = s.base_class.empty() ? s.prefix + "Model" : s.base_class;
  if (class_name == base) {
    decoder_base(b, s, d, mlp, attention, tail);
    return b.finish();
  }
  {
    auto m = b.module("model", base);
    decoder_base(b, s, d, mlp, attention, tail);
  }
  if (ends_with(class_name, "ForCausalLM")) {
    if (d.tie) nn::tied_linear(b, "lm_head", "model.embed_tokens.weight");
    else nn::linear(b, "lm_head", d.hidden, d.vocab, s.lm_head_bias);
  } else if (ends_with(class_name, "ForSequenceClassification")) {
    nn::linear(b, "score", d.hidden, num_labels(c), false);
  } else if (ends_with(class_name, "ForTokenClassification")) {
    nn::linear(b, s.token_head, d.hidden, num_labels(c), true);
  } else {
    throw Error(ErrorCode::kUnknownClass,
                fmt::format("{}: no {}-style head for class '{}'", c.where(), s.prefix,
                            class_name));
  }
  return b.finish();
}

}  // namespace

TensorTree build_decoder(const BuildRequest& r, std::string_view class_name, const LlamaLikeSpec& s,
                         const DecoderDims& d, const LayerFn& mlp, const LayerFn& attention,
                         const LayerFn& tail) {
  TensorTree tree = decoder_tree(r.config, class_name, s, d, mlp, attention, tail);
  if (r.dims) *r.dims = decoder_model_dims(r.config, d, read_rope(r.config, 10000.0, d.current_rope_dim));
  return tree;
}

}  // namespace memfit::arch
