// DeepSeek — remote code (trust_remote_code): modeling_deepseek.py of the Hub repos
// deepseek-ai/deepseek-moe-16b-base (model_type "deepseek": DeepseekModel, DeepseekForCausalLM),
// deepseek-ai/DeepSeek-V2-Lite ("deepseek_v2": DeepseekV2*) and deepseek-ai/DeepSeek-V3
// ("deepseek_v3": DeepseekV3*). Their config.json auto_map sends AutoModel and
// AutoModelForCausalLM to these classes. moonshotai/Kimi-K2-Instruct (model_type "kimi_k2")
// ships the same DeepseekV3 remote code (its auto_map names configuration_deepseek.DeepseekV3Config
// and modeling_deepseek.DeepseekV3ForCausalLM; transformers has no kimi_k2 class), so it is V3.
//
// Layout (all three): model.embed_tokens, model.layers.N {self_attn, mlp, input_layernorm,
// post_attention_layernorm}, model.norm, lm_head. Layer N's mlp is the MoE block when
//   n_routed_experts is not None and N >= first_k_dense_replace and N % moe_layer_freq == 0
// else the dense <P>MLP(intermediate_size). The MoE block registers, in order:
//   experts.M = <P>MLP(moe_intermediate_size) (gate_proj, up_proj, down_proj),
//   gate = MoEGate {weight [n_routed_experts, hidden] (+ e_score_correction_bias
//          [n_routed_experts] when topk_method == "noaux_tc", V3)},
//   shared_experts = <P>MLP(moe_intermediate_size * n_shared_experts) if n_shared_experts.
// Attention: V1 is Llama's (q/k/v/o, bias=attention_bias). V2/V3 use MLA:
//   q_proj [heads*q_head_dim, hidden] if q_lora_rank is null, else q_a_proj [q_lora_rank, hidden]
//   (bias=attention_bias), q_a_layernorm, q_b_proj [heads*q_head_dim, q_lora_rank];
//   kv_a_proj_with_mqa [kv_lora_rank + qk_rope_head_dim, hidden] (bias=attention_bias),
//   kv_a_layernorm [kv_lora_rank], kv_b_proj [heads*(qk_nope_head_dim + v_head_dim), kv_lora_rank],
//   o_proj [hidden, heads*v_head_dim] (bias=attention_bias); q_head_dim = nope + rope.
// Every attention owns a rotary_emb with inv_freq and cos_cached/sin_cached
// [max_position_embeddings, rope_dim] (V2/V3: rope_dim = qk_rope_head_dim; yarn re-registers the
// same three). Remote code allocates them under any transformers version: BufferEra::kAlways,
// and no model-level rotary. The HF file builds num_hidden_layers layers: V3's multi-token
// prediction layer (num_nextn_predict_layers) is not part of the model.
// Modules without tensors (same three Hub files): only every <P>MLP's act_fn (hidden_act, after
// down_proj, added by gated_mlp); attention_dropout is a float and no dropout module exists.
//
// The family is one for the three model_types, so the version comes from model_type and the
// requested class only chooses the role (Model / ForCausalLM / ForSequenceClassification).
#include <fmt/format.h>

#include "deepseek_layers.h"
#include "families.h"

namespace memfit::arch {
namespace {

enum class Version { kV1, kV2, kV3 };

std::string_view role_of(std::string_view cls) {
  for (std::string_view role : {"ForCausalLM", "ForSequenceClassification", "Model"})
    if (cls.size() >= role.size() && cls.substr(cls.size() - role.size()) == role) return role;
  return {};
}

std::string rope_class(const Config& c, std::string_view prefix) {
  const std::string type = rope_scaling_type(c);
  if (type == "linear") return fmt::format("{}LinearScalingRotaryEmbedding", prefix);
  if (type == "dynamic") return fmt::format("{}DynamicNTKScalingRotaryEmbedding", prefix);
  if (type == "yarn") return fmt::format("{}YarnRotaryEmbedding", prefix);
  return fmt::format("{}RotaryEmbedding", prefix);
}

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  const std::string model_type = c.string_or({"model_type"}, "deepseek");
  const Version v = model_type == "deepseek_v3" || model_type == "kimi_k2" ? Version::kV3
                    : model_type == "deepseek_v2"                           ? Version::kV2
                                                                            : Version::kV1;
  const std::string prefix =
      v == Version::kV3 ? "DeepseekV3" : v == Version::kV2 ? "DeepseekV2" : "Deepseek";
  const std::string_view role = role_of(r.class_name);
  if (role.empty())
    throw Error(ErrorCode::kUnknownClass,
                fmt::format("{}: class '{}' is not a DeepSeek class", c.where(), r.class_name));
  const std::string class_name = prefix + std::string(role);

  // Configuration-class defaults (configuration_deepseek.py of each repo).
  // MLA (V2/V3) has no hidden / heads head_dim: the placeholder skips that divisibility check.
  const std::int64_t head_dim_default = v == Version::kV1 ? 0 : 128;
  DecoderDims d =
      v == Version::kV3
          ? read_decoder_dims(c, {129280, 7168, 18432, 61, 128, 128, 4096, false, head_dim_default})
          : read_decoder_dims(c, {102400, 4096, 11008, 30, 32, 32, 2048, false, head_dim_default});
  const bool attn_bias = c.flag_or({"attention_bias"}, false);
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = attn_bias;

  DeepseekMoeSpec moe;
  moe.prefix = prefix;
  moe.router_class = "MoEGate";
  // V1/V2 default n_routed_experts to None (dense model); V3 to 256 experts, 1 shared.
  const bool routed_default = v == Version::kV3;
  const bool present = c.has("n_routed_experts") ||
                       (routed_default && !c.json().contains("n_routed_experts"));
  moe.routed = c.repeats_or({"n_routed_experts"}, 256);
  const bool shared_default = v == Version::kV3;
  moe.shared = c.has("n_shared_experts") ||
                       (shared_default && !c.json().contains("n_shared_experts"))
                   ? c.repeats_or({"n_shared_experts"}, 1)
                   : 0;
  moe.width = c.dim_or({"moe_intermediate_size"}, v == Version::kV3 ? 2048 : 1407);
  moe.score_bias =
      v != Version::kV1 &&
      c.string_or({"topk_method"}, v == Version::kV3 ? "noaux_tc" : "gready") == "noaux_tc";
  moe.active = c.count_or({"num_experts_per_tok"}, v == Version::kV3 ? 8 : 0);
  std::vector<bool> sparse = deepseek_moe_layers(c, d.layers, v == Version::kV3 ? 3 : 0);
  if (!present) sparse.assign(sparse.size(), false);

  LlamaLikeSpec s;
  s.prefix = prefix;
  s.norm_class = prefix + "RMSNorm";
  s.rope = LegacyRope::kPlain;
  s.rope_class = rope_class(c, prefix);
  s.rope_era = BufferEra::kAlways;
  s.current_rotary = false;

  // MLA (V2/V3): the lambda is a named local so the LayerFn reference stays valid.
  MlaDims ranks;
  const auto mla = [&](TreeBuilder& b, std::int64_t) { mla_attention(b, s, d, ranks, attn_bias); };
  LayerFn attention;
  if (v != Version::kV1) {
    ranks = read_mla(c, {1536, 512, 64, 128, 128});
    d.rope_dim = ranks.qk_rope_head_dim;
    attention = mla;
  }

  const auto mlp = [&](TreeBuilder& b, std::int64_t layer) {
    if (sparse[static_cast<std::size_t>(layer)]) return deepseek_moe(b, moe, d.hidden, d.act);
    gated_mlp(b, "mlp", prefix + "MLP", d.hidden, d.inter, false, d.act);
  };
  TensorTree tree = build_decoder(r, class_name, s, d, mlp, attention);
  // V3's router bias: float32 in DeepSeek's checkpoint, and kept so by transformers' own
  // DeepseekV3 classes in a half-precision load (the remote code has no keep list and would
  // load it at the requested dtype; memfit sizes the load without trust_remote_code).
  if (v == Version::kV3) keep_score_bias_fp32(tree, /*stored_fp32=*/true);
  if (r.dims && *r.dims) {
    ModelDims& dims = **r.dims;
    // The activation formulas' head width stays transformers' hidden ÷ heads (MLA's own K and V
    // widths are per layer, below).
    dims.head_dim = c.dim_or({"head_dim"}, d.hidden / d.heads);
    if (v != Version::kV1) set_mla(dims, ranks);
    if (present)
      set_moe(dims, {moe.routed, moe.active, moe.shared, moe.width, moe.shared * moe.width}, true,
              sparse);
  }
  return tree;
}

}  // namespace

const Family& deepseek_family() {
  // One family for four model_types: classes[0] (the AutoModel class) and the first
  // AutoModelForCausalLM entry are mapped to the config's own version by build().
  static const Family f{
      "transformers",
      {"deepseek", "deepseek_v2", "deepseek_v3", "kimi_k2"},
      {{"DeepseekModel", "AutoModel"},
       {"DeepseekForCausalLM", "AutoModelForCausalLM"},
       {"DeepseekForSequenceClassification", "AutoModelForSequenceClassification"},
       {"DeepseekV2Model", "AutoModel"},
       {"DeepseekV2ForCausalLM", "AutoModelForCausalLM"},
       {"DeepseekV2ForSequenceClassification", "AutoModelForSequenceClassification"},
       {"DeepseekV3Model", "AutoModel"},
       {"DeepseekV3ForCausalLM", "AutoModelForCausalLM"},
       {"DeepseekV3ForSequenceClassification", "AutoModelForSequenceClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
