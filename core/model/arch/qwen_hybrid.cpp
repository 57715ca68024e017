#include "qwen_hybrid.h"

#include <fmt/format.h>

#include "dec_common.h"

namespace memfit::arch::hybrid {

LinearAttentionDims read_linear_attention(const Config& c) {
  LinearAttentionDims la;
  la.k_heads = c.dim_or({"linear_num_key_heads"}, 16);
  la.v_heads = c.dim_or({"linear_num_value_heads"}, 32);
  la.k_head_dim = c.dim_or({"linear_key_head_dim"}, 128);
  la.v_head_dim = c.dim_or({"linear_value_head_dim"}, 128);
  la.conv_kernel = c.dim_or({"linear_conv_kernel_dim"}, 4);
  // The DeltaNet splits the value heads into groups per key head (fix_query_key_value_ordering).
  require_divisible(c, la.v_heads, "linear_num_value_heads", la.k_heads, "linear_num_key_heads");
  return la;
}

std::vector<bool> linear_layers(const Config& c, std::int64_t layers) {
  std::vector<bool> linear(static_cast<std::size_t>(layers));
  if (auto types = layer_types(c, layers)) {
    for (std::size_t i = 0; i < types->size(); ++i) {
      const std::string& t = (*types)[i];
      if (t == "linear_attention" || t == "mamba") linear[i] = true;
      else if (t != "full_attention" && t != "attention")
        throw Error(ErrorCode::kInvalidValue,
                    fmt::format("{}: 'layer_types'[{}] is '{}'; expected 'linear_attention' or "
                                "'full_attention'", c.where(), i, t));
    }
    return linear;
  }
  const std::int64_t interval = c.dim_or({"full_attention_interval"}, 4);
  for (std::int64_t i = 0; i < layers; ++i) linear[static_cast<std::size_t>(i)] = (i + 1) % interval != 0;
  return linear;
}

DecoderDims read_text_dims(const Config& c, const DecoderDefaults& def) {
  DecoderDims d = read_decoder_dims(c, def);
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, false);
  // Qwen3NextConfig.__post_init__: kwargs.setdefault("partial_rotary_factor", 0.25).
  d.current_rope_dim = dec::rotary_dims(c, d.head_dim, rope_number(c, "partial_rotary_factor", 0.25),
                                        "partial_rotary_factor");
  return d;
}

LlamaLikeSpec hybrid_spec(const std::string& prefix) {
  LlamaLikeSpec s;
  s.prefix = prefix;
  s.norm_class = prefix + "RMSNorm";
  s.rope = LegacyRope::kNone;
  s.rope_class = "";
  return s;
}

namespace {

void gated_deltanet(TreeBuilder& b, const LlamaLikeSpec& s, const DecoderDims& d,
                    const LinearAttentionDims& la, InProj in_proj) {
  auto m = b.module("linear_attn", s.prefix + "GatedDeltaNet");
  // The module's own parameters come first in its state dict, before any child's.
  b.param("dt_bias", {la.v_heads});
  b.param("A_log", {la.v_heads});
  // Qwen3-Next keeps ACT2FN[hidden_act] as a child; Qwen3.5 only names the activation.
  if (in_proj == InProj::kFused) nn::activation(b, "act", d.act);
  nn::conv1d(b, "conv1d", la.conv_dim(), la.conv_dim(), la.conv_kernel, false, la.conv_dim());
  if (in_proj == InProj::kFused) {
    nn::linear(b, "in_proj_qkvz", d.hidden, 2 * la.key_dim() + 2 * la.value_dim(), false);
    nn::linear(b, "in_proj_ba", d.hidden, 2 * la.v_heads, false);
  }
  nn::rms_norm(b, "norm", la.v_head_dim, s.prefix + "RMSNormGated");
  nn::linear(b, "out_proj", la.value_dim(), d.hidden, false);
  if (in_proj == InProj::kSplit) {
    nn::linear(b, "in_proj_qkv", d.hidden, la.conv_dim(), false);
    nn::linear(b, "in_proj_z", d.hidden, la.value_dim(), false);
    nn::linear(b, "in_proj_b", d.hidden, la.v_heads, false);
    nn::linear(b, "in_proj_a", d.hidden, la.v_heads, false);
  }
}

void gated_attention(TreeBuilder& b, const LlamaLikeSpec& s, const DecoderDims& d) {
  auto attn = b.module("self_attn", s.prefix + "Attention");
  const std::int64_t q = d.heads * d.head_dim;
  const std::int64_t kv = d.kv_heads * d.head_dim;
  nn::linear(b, "q_proj", d.hidden, 2 * q, d.q_bias);
  nn::linear(b, "k_proj", d.hidden, kv, d.k_bias);
  nn::linear(b, "v_proj", d.hidden, kv, d.v_bias);
  nn::linear(b, "o_proj", q, d.hidden, d.o_bias);
  decoder_norm(b, "q_norm", s, d.head_dim);
  decoder_norm(b, "k_norm", s, d.head_dim);
}

}  // namespace

void token_mixer(TreeBuilder& b, const LlamaLikeSpec& s, const DecoderDims& d,
                 const LinearAttentionDims& la, InProj in_proj, bool linear) {
  if (linear) gated_deltanet(b, s, d, la, in_proj);
  else gated_attention(b, s, d);
}

ModelDims model_dims(const DecoderDims& d, const RopeDims& rope, const std::vector<bool>& linear,
                     const LinearAttentionDims& la) {
  ModelDims m = uniform_decoder_dims(d, rope);
  for (std::size_t i = 0; i < m.per_layer.size() && i < linear.size(); ++i) {
    if (!linear[i]) continue;
    LayerDims& l = m.per_layer[i];
    l.attention = AttentionKind::kRecurrent;
    l.state = la.state();
    l.heads = la.v_heads;
    l.kv_heads = la.k_heads;
    l.k_head_dim = la.k_head_dim;
    l.v_head_dim = la.v_head_dim;
    l.rope = RopeDims{};
  }
  return m;
}

}  // namespace memfit::arch::hybrid
