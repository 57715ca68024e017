// DeepSeek-V3's MLA layout as transformers writes it (read on main, the @strict dataclass
// configs): GLM-4.7-Flash (models/glm4_moe_lite/modular_glm4_moe_lite.py: Glm4MoeLiteModel,
// Glm4MoeLiteForCausalLM), and the DeepSeek Sparse Attention models DeepSeek-V3.2
// (models/deepseek_v32/modular_deepseek_v32.py: DeepseekV32Model, DeepseekV32ForCausalLM) and
// GLM-5 (models/glm_moe_dsa/modular_glm_moe_dsa.py: GlmMoeDsaModel, GlmMoeDsaForCausalLM), which
// inherit GLM-4.7-Flash's decoder layer.
//
// deepseek_layers.h's blocks: MLA attention — plus, for the DSA models, a lightning indexer per
// layer (self_attn.indexer: wq_b, wk, k_norm, weights_proj) — one model-level rotary_emb
// (inv_freq over qk_rope_head_dim, the config's head_dim), no per-layer rotary. Layer i's mlp is
// the MoE block when mlp_layer_types[i] is "sparse" (default: the first first_k_dense_replace
// layers dense — 1 for GLM-4.7-Flash, 3 for the DSA models) — experts, gate = <P>TopkRouter
// {weight, e_score_correction_bias (a float32 buffer)}, shared_experts — else
// <P>MLP(intermediate_size). GLM-5's indexer_types may mark a layer "shared": it then reuses the
// previous layer's top-k and has no indexer of its own (default: every layer "full").
// Kept in float32 by transformers: e_score_correction_bias (`_keep_in_fp32_modules_strict`, from
// DeepseekV3PreTrainedModel, which all three inherit) and, for the DSA models
// (DeepseekV32PreTrainedModel, GlmMoeDsaPreTrainedModel), `_keep_in_fp32_modules =
// ["indexer.weights_proj"]` (float16 loads only; the FP8 quantizer leaves it a plain Linear: the
// checkpoints store it in bf16 with no weight_scale_inv).
// Not loaded: the multi-token-prediction layer stored after the last one (model.layers.47.* for
// GLM-4.7-Flash, .61.* for V3.2, .78.* for GLM-5: _keys_to_ignore_on_load_unexpected).
#include <fmt/format.h>

#include "deepseek_layers.h"
#include "families.h"
#include "memfit/model/keep_fp32.h"

namespace memfit::arch {
namespace {

struct Variant {
  const char* prefix;
  DecoderDefaults defaults;
  MlaDims mla;
  IndexerDims indexer;  // 0 heads: no indexer (GLM-4.7-Flash)
  std::int64_t routed, shared, width, active, first_dense;
};

// Glm4MoeLiteConfig / DeepseekV32Config / GlmMoeDsaConfig defaults.
const Variant kLite{"Glm4MoeLite", {154880, 2048, 10240, 47, 20, 20, 202752, false, 64},
                    {768, 512, 64, 192, 256}, {0, 0}, 64, 1, 1536, 4, 1};
const Variant kV32{"DeepseekV32", {129280, 7168, 18432, 61, 128, 128, 163840, false, 64},
                   {1536, 512, 64, 128, 128}, {64, 128}, 256, 1, 2048, 8, 3};
const Variant kGlm{"GlmMoeDsa", {154880, 6144, 12288, 78, 64, 64, 202752, false, 64},
                   {2048, 512, 64, 192, 256}, {32, 128}, 256, 1, 2048, 8, 3};

// Which layers run their own indexer: GLM-5's indexer_types ("full" / "shared"), else all.
std::vector<bool> indexer_layers(const Config& c, std::int64_t layers) {
  std::vector<bool> full(static_cast<std::size_t>(layers), true);
  const auto types = c.string_list({"indexer_types"});
  if (!types) return full;
  if (static_cast<std::int64_t>(types->size()) != layers)
    throw Error(ErrorCode::kInvalidValue, fmt::format("{}: 'indexer_types' has {} entries for {} layers",
                                                      c.where(), types->size(), layers));
  for (std::size_t i = 0; i < full.size(); ++i) {
    if ((*types)[i] != "full" && (*types)[i] != "shared")
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: 'indexer_types'[{}] is '{}'; expected 'full' or 'shared'",
                              c.where(), i, (*types)[i]));
    full[i] = (*types)[i] == "full";
  }
  return full;
}

TensorTree build(const BuildRequest& r, const Variant& v) {
  const Config& c = r.config;
  DecoderDims d = read_decoder_dims(c, v.defaults);
  const MlaDims ranks = read_mla(c, v.mla);
  IndexerDims indexer;
  std::vector<bool> own_indexer(static_cast<std::size_t>(d.layers), false);
  if (v.indexer.heads > 0) {
    indexer = {c.dim_or({"index_n_heads"}, v.indexer.heads), c.dim_or({"index_head_dim"}, v.indexer.head_dim)};
    own_indexer = indexer_layers(c, d.layers);
    if (ranks.q_lora_rank == 0)
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: 'q_lora_rank' is null, but the DSA indexer reads the compressed "
                              "query (a number is needed)", c.where()));
  }
  const bool bias = c.flag_or({"attention_bias"}, false);
  // The model-level rotary turns qk_rope_head_dim dims (transformers sets head_dim to it).
  d.current_rope_dim = ranks.qk_rope_head_dim;

  DeepseekMoeSpec moe;
  moe.prefix = v.prefix;
  moe.router_class = std::string(v.prefix) + "TopkRouter";
  moe.score_bias = moe.score_bias_buffer = true;
  moe.routed = c.repeats_or({"n_routed_experts", "num_experts"}, v.routed);
  moe.shared = c.repeats_or({"n_shared_experts"}, v.shared);
  moe.width = c.dim_or({"moe_intermediate_size"}, v.width);
  moe.active = c.count_or({"num_experts_per_tok"}, v.active);
  const std::vector<bool> sparse = deepseek_moe_layers(c, d.layers, v.first_dense);

  LlamaLikeSpec s;
  s.prefix = v.prefix;
  s.norm_class = s.prefix + "RMSNorm";
  s.rope = LegacyRope::kNone;
  const auto attention = [&](TreeBuilder& b, std::int64_t layer) {
    mla_attention(b, s, d, ranks, bias, own_indexer[static_cast<std::size_t>(layer)] ? indexer : IndexerDims{});
  };
  const auto mlp = [&](TreeBuilder& b, std::int64_t layer) {
    if (sparse[static_cast<std::size_t>(layer)]) return deepseek_moe(b, moe, d.hidden, d.act);
    gated_mlp(b, "mlp", s.prefix + "MLP", d.hidden, d.inter, false, d.act);
  };
  TensorTree tree = build_decoder(r, r.class_name, s, d, mlp, attention);
  // DeepSeek's own checkpoint stores the router bias in float32 (Gate.bias); GLM's are taken to
  // store it at their torch_dtype (no GLM tensor listing with dtypes says otherwise).
  keep_score_bias_fp32(tree, /*stored_fp32=*/std::string_view(v.prefix) == "DeepseekV32");
  if (v.indexer.heads > 0) keep_in_fp32(tree, {"indexer.weights_proj"}, KeepFp32::kFloat16Loads);
  if (r.dims && *r.dims) {
    ModelDims& dims = **r.dims;
    dims.head_dim = d.hidden / d.heads;  // the activation formulas' width, as for DeepSeek-V3
    set_mla(dims, ranks);
    for (std::size_t i = 0; i < dims.per_layer.size() && i < own_indexer.size(); ++i)
      if (own_indexer[i]) dims.per_layer[i].mla.index_head_dim = indexer.head_dim;
    set_moe(dims, {moe.routed, moe.active, moe.shared, moe.width, moe.shared * moe.width}, true, sparse);
  }
  return tree;
}

TensorTree build_lite(const BuildRequest& r) { return build(r, kLite); }
TensorTree build_v32(const BuildRequest& r) { return build(r, kV32); }
TensorTree build_glm(const BuildRequest& r) { return build(r, kGlm); }

}  // namespace

const Family& glm4_moe_lite_family() {
  static const Family f{"transformers",
                        {"glm4_moe_lite"},
                        {{"Glm4MoeLiteModel", "AutoModel"}, {"Glm4MoeLiteForCausalLM", "AutoModelForCausalLM"}},
                        &build_lite};
  return f;
}

const Family& deepseek_v32_family() {
  static const Family f{"transformers",
                        {"deepseek_v32"},
                        {{"DeepseekV32Model", "AutoModel"}, {"DeepseekV32ForCausalLM", "AutoModelForCausalLM"}},
                        &build_v32};
  return f;
}

const Family& glm_moe_dsa_family() {
  static const Family f{"transformers",
                        {"glm_moe_dsa"},
                        {{"GlmMoeDsaModel", "AutoModel"}, {"GlmMoeDsaForCausalLM", "AutoModelForCausalLM"}},
                        &build_glm};
  return f;
}

}  // namespace memfit::arch
