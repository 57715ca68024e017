// gpt-oss (transformers models/gpt_oss/{modular,configuration}_gpt_oss.py, main after 5.0; first
// in 4.55): GptOssModel, GptOssForCausalLM, GptOssForSequenceClassification,
// GptOssForTokenClassification.
//
// Mixtral's layout with three differences:
// - GptOssAttention: q/k/v/o with biases (attention_bias, default true) and a learned per-head
//   attention sink, `sinks` [num_attention_heads] — a logit in the softmax, nothing cached;
// - layer_types alternates sliding (window `sliding_window`) and full attention; absent, layer i
//   slides when i is even (GptOssConfig.__post_init__);
// - GptOssMLP = router (GptOssTopKRouter: weight [E, hidden] and bias [E]) and experts
//   (GptOssExperts) holding every expert in 3-D parameters, [in, out] per expert:
//   gate_up_proj [E, hidden, 2·intermediate] (gate and up interleaved), gate_up_proj_bias
//   [E, 2·intermediate], down_proj [E, intermediate, hidden], down_proj_bias [E, hidden].
//
// This is the dequantized tree transformers builds in memory. The Hub's checkpoints store the two
// expert matrices in MXFP4 (quantization_config.quant_method "mxfp4"), transposed to [out, in]
// and packed 32 values per block of 16 bytes, with one uint8 exponent per block:
//   gate_up_proj [E, H, 2I] ↔ gate_up_proj_blocks [E, 2I, H/32, 16] U8 + gate_up_proj_scales [E, 2I, H/32] U8
//   down_proj    [E, I, H]  ↔ down_proj_blocks    [E, H, I/32, 16] U8 + down_proj_scales    [E, H, I/32] U8
// the biases and everything else in bf16. Mapping that stored form is quant_config's business.
// GptOssPreTrainedModel: `_keep_in_fp32_modules = ["post_attention_layernorm", "input_layernorm",
// "norm"]` — the RMSNorm weights stay float32 in a float16 load (not in bfloat16).
#include <string>
#include <vector>

#include <fmt/format.h>

#include "families.h"
#include "llama_like.h"
#include "memfit/model/keep_fp32.h"

namespace memfit::arch {
namespace {

void attention(TreeBuilder& b, const DecoderDims& d) {
  auto attn = b.module("self_attn", "GptOssAttention");
  // The module's own parameter comes first in its state dict.
  b.param("sinks", {d.heads});
  nn::linear(b, "q_proj", d.hidden, d.heads * d.head_dim, d.q_bias);
  nn::linear(b, "k_proj", d.hidden, d.kv_heads * d.head_dim, d.k_bias);
  nn::linear(b, "v_proj", d.hidden, d.kv_heads * d.head_dim, d.v_bias);
  nn::linear(b, "o_proj", d.heads * d.head_dim, d.hidden, d.o_bias);
}

void moe(TreeBuilder& b, const DecoderDims& d, std::int64_t experts) {
  auto mlp = b.module("mlp", "GptOssMLP");
  {
    auto router = b.module("router", "GptOssTopKRouter");
    b.param("weight", {experts, d.hidden});
    b.param("bias", {experts});
  }
  auto e = b.module("experts", "GptOssExperts");
  b.param("gate_up_proj", {experts, d.hidden, 2 * d.inter});
  b.param("gate_up_proj_bias", {experts, 2 * d.inter});
  b.param("down_proj", {experts, d.inter, d.hidden});
  b.param("down_proj_bias", {experts, d.hidden});
}

// Per layer, whether it slides: layer_types, else GptOssConfig's alternation.
std::vector<bool> sliding_layers(const Config& c, std::int64_t layers) {
  std::vector<bool> sliding(static_cast<std::size_t>(layers));
  const auto types = layer_types(c, layers);
  if (!types) {
    for (std::int64_t i = 0; i < layers; ++i) sliding[static_cast<std::size_t>(i)] = (i + 1) % 2 != 0;
    return sliding;
  }
  for (std::size_t i = 0; i < types->size(); ++i) {
    const std::string& t = (*types)[i];
    if (t != "sliding_attention" && t != "full_attention")
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: 'layer_types'[{}] is '{}'; gpt-oss layers are "
                              "'sliding_attention' or 'full_attention'", c.where(), i, t));
    sliding[i] = t == "sliding_attention";
  }
  return sliding;
}

// The model's dims: every layer with sinks, the sliding ones windowed; the MoE a token goes
// through. A bad layer_types only fails the consumer that needs the layers' kinds.
ModelDims model_dims(const Config& c, const DecoderDims& d, std::int64_t experts) {
  ModelDims m = uniform_decoder_dims(d, read_rope(c, 150000.0, d.current_rope_dim));
  for (auto& l : m.per_layer) l.sinks = true;
  try {
    const std::vector<bool> sliding = sliding_layers(c, d.layers);
    const std::int64_t window = c.dim_or({"sliding_window"}, 128);
    for (std::size_t i = 0; i < sliding.size(); ++i) {
      if (!sliding[i]) continue;
      m.per_layer[i].attention = AttentionKind::kSliding;
      m.per_layer[i].window = window;
    }
    m.window_rule = c.has("layer_types") ? "layer_types" : "layer_types (GptOssConfig default)";
  } catch (const Error& e) {
    m.attention_error = e;
  }
  set_moe(m, {experts, c.count_or({"num_experts_per_tok"}, 4), 0, d.inter, 0}, false);
  return m;
}

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // GptOssConfig defaults.
  DecoderDims d = read_decoder_dims(c, {201088, 2880, 2880, 36, 64, 8, 131072, false, /*head_dim=*/64});
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, true);
  d.norm_eps = read_norm_eps(c, {"rms_norm_eps"}, 1e-5);
  // GptOssConfig.attribute_map: num_experts → num_local_experts.
  const std::int64_t experts = c.repeats_or({"num_local_experts", "num_experts"}, 128);
  LlamaLikeSpec s;
  s.prefix = "GptOss";
  s.norm_class = "GptOssRMSNorm";
  s.rope = LegacyRope::kNone;
  s.rope_class = "";
  const BuildRequest tree_only{r.config, r.class_name, r.model_name, nullptr};
  TensorTree tree = build_decoder(
      tree_only, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) { moe(b, d, experts); },
      [&](TreeBuilder& b, std::int64_t) { attention(b, d); });
  keep_in_fp32(tree, {"post_attention_layernorm", "input_layernorm", "norm"}, KeepFp32::kFloat16Loads);
  if (r.dims) *r.dims = model_dims(c, d, experts);
  return tree;
}

}  // namespace

const Family& gpt_oss_family() {
  static const Family f{
      "transformers",
      {"gpt_oss"},
      {{"GptOssModel", "AutoModel"},
       {"GptOssForCausalLM", "AutoModelForCausalLM"},
       {"GptOssForSequenceClassification", "AutoModelForSequenceClassification"},
       {"GptOssForTokenClassification", "AutoModelForTokenClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
