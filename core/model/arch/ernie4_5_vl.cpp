// Baidu ERNIE 4.5 VL (transformers models/ernie4_5_vl_moe/modeling_ernie4_5_vl_moe.py and
// configuration_ernie4_5_vl_moe.py, transformers 5.x, read on main; the checkpoints' names from its
// conversion_mapping.py "ernie4_5_vl_moe" entry, cross-checked with vLLM's
// models/ernie45_vl.py and ernie45_vl_moe.py, which load the same files):
// Ernie4_5_VLMoeForConditionalGeneration (model_type ernie4_5_vl_moe).
//
// The Hub's safetensors (baidu/ERNIE-4.5-VL-*-PT) keep Baidu's remote-code names, which current
// transformers renames and fuses on load; the tree keeps the stored names, the ones an index lists:
//
//   vision_model                 qwen_vision.h's tower, ERNIE generation: patch_embed.proj Linear
//                                [hidden, 3·patch²], blocks.N {norm1, norm2, attn.qkv, attn.proj,
//                                mlp.fc1, mlp.fc2}, ln
//   model                        the text decoder, Ernie 4.5 MoE's layout (use_bias on q/k/v/o
//                                and every MLP projection):
//     layers.N.mlp               layer 0 (mlp_layer_types, default "dense" then "sparse") an MLP
//                                of intermediate_size; a sparse layer holds, for moe_num_experts E:
//       moe_statics.e_score_correction_bias  [2, E]: the text row, then the vision row
//       gate.weight, gate.weight_1           [hidden, E] each (text, vision router; transposed
//                                            bare parameters)
//       experts.0 … experts.E-1              text experts, width moe_intermediate_size[0]
//       experts.E … experts.2E-1             vision experts, width moe_intermediate_size[1]
//       shared_experts                       width moe_intermediate_size[0] × moe_num_shared_experts
//     norm, rotary_emb
//     resampler_model            Ernie4_5_VLMoeVariableResolutionResamplerModel, S = vision
//                                hidden × spatial_merge_size²: spatial_linear = Sequential {0: Linear
//                                S→S, 1: GELU, 2: Linear S→S, 3: LayerNorm S}, temporal_linear the
//                                same from S × temporal_merge_size, mlp Linear S→text hidden,
//                                after_norm RMSNorm
//   lm_head                      tied to model.embed_tokens.weight (tie_word_embeddings, default true)
//
// A text token runs moe_k of the E text experts, a vision token moe_k of the E vision experts; the
// dims count the text experts (what decoding reads), so the "active" figure also counts moe_k / E of
// the vision experts. The base class (current transformers' Ernie4_5_VLMoeModel, with fused
// text_moe / vision_moe experts) and Baidu's remote-code configs (model_type ernie4_5_moe_vl, flat,
// moe_num_experts [E, E]) are not described.
#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "deepseek_layers.h"
#include "families.h"
#include "llama_like.h"
#include "qwen_vision.h"

namespace memfit::arch {
namespace {

struct ErnieMoe {
  std::int64_t experts = 0, active = 0, shared = 0, text_width = 0, vision_width = 0;
};

// moe_num_experts is one count for both modalities (a list [E, E] is read when its entries agree);
// moe_intermediate_size lists the text and the vision expert width.
ErnieMoe read_moe(const Config& text) {
  ErnieMoe m;
  const auto it = text.json().find("moe_num_experts");
  if (it != text.json().end() && it->is_array()) {
    const auto counts = text.int_list({"moe_num_experts"}).value_or(std::vector<std::int64_t>{});
    if (counts.empty() || std::adjacent_find(counts.begin(), counts.end(), std::not_equal_to<>()) != counts.end())
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: 'moe_num_experts' = {} must give the text and vision experts one "
                              "count", text.where(), it->dump()));
    m.experts = counts.front();
  } else {
    m.experts = text.repeats_or({"moe_num_experts"}, 64);
  }
  const auto widths = text.int_list({"moe_intermediate_size"}).value_or(std::vector<std::int64_t>{1536, 512});
  if (widths.size() != 2 || widths[0] <= 0 || widths[1] <= 0)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: 'moe_intermediate_size' must list the text and the vision expert "
                            "widths, two positive integers; got {} entries", text.where(), widths.size()));
  m.text_width = widths[0];
  m.vision_width = widths[1];
  m.active = text.count_or({"moe_k"}, 6);
  m.shared = text.count_or({"moe_num_shared_experts"}, 2);
  return m;
}

void sparse_block(TreeBuilder& b, const DecoderDims& d, const ErnieMoe& m, bool bias) {
  auto moe = b.module("mlp", "Ernie4_5_VLMoeMoeBlock");
  {
    auto statics = b.module("moe_statics", "Ernie4_5_VLMoeMoeStatics");
    b.param("e_score_correction_bias", {2, m.experts});
  }
  {
    auto gate = b.module("gate", "Ernie4_5_VLMoeMoeTopKRouter");
    b.param("weight", {d.hidden, m.experts});
    b.param("weight_1", {d.hidden, m.experts});
  }
  {
    auto list = b.module("experts", "ModuleList");
    for (std::int64_t e = 0; e < 2 * m.experts; ++e)
      gated_mlp(b, std::to_string(e), "Ernie4_5_VLMoeMLP", d.hidden,
                e < m.experts ? m.text_width : m.vision_width, bias, d.act);
  }
  if (m.shared > 0)
    gated_mlp(b, "shared_experts", "Ernie4_5_VLMoeMLP", d.hidden, m.text_width * m.shared, bias, d.act);
}

// Two Linear layers with a GELU between and a LayerNorm after, as the stored Sequential.
void resampler_stage(TreeBuilder& b, std::string_view name, std::int64_t in, std::int64_t out) {
  auto s = b.module(name, "Sequential");
  nn::linear(b, "0", in, out);
  b.stateless("1", "GELU");
  nn::linear(b, "2", out, out);
  nn::layer_norm(b, "3", out);
}

void resampler(TreeBuilder& b, const Config& vision, std::int64_t vision_hidden, std::int64_t text_hidden) {
  const std::int64_t merge = vision.dim_or({"spatial_merge_size"}, 2);
  const std::int64_t temporal = vision.dim_or({"temporal_merge_size"}, 2);
  const std::int64_t spatial = vision_hidden * merge * merge;
  auto r = b.module("resampler_model", "Ernie4_5_VLMoeVariableResolutionResamplerModel");
  resampler_stage(b, "spatial_linear", spatial, spatial);
  resampler_stage(b, "temporal_linear", spatial * temporal, spatial);
  nn::linear(b, "mlp", spatial, text_hidden);
  nn::rms_norm(b, "after_norm", text_hidden, "Ernie4_5_VLMoeRMSNorm");
}

TensorTree build(const BuildRequest& r) {
  const Config& top = r.config;
  // Configs saved by transformers nest text_config; the text keys may also sit at the top level
  // (Ernie4_5_VLMoeConfig passes its own keys to the text config when text_config is absent).
  const Config text = text_config(top);
  const Config vision = vision::vision_config(top);
  // Ernie4_5_VLMoeTextConfig defaults.
  DecoderDims d = read_decoder_dims(text, {103424, 2560, 12288, 28, 20, 4, 131072, true});
  // The text config's tie_word_embeddings when it states one (the 424B model's is false), else
  // the composite config's (default true).
  if (!text.has("tie_word_embeddings")) d.tie = top.flag_or({"tie_word_embeddings"}, d.tie);
  const bool bias = text.flag_or({"use_bias"}, false);
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = bias;
  const ErnieMoe m = read_moe(text);
  // mlp_layer_types; without it Ernie4_5_VLMoeTextConfig makes layer 0 dense and the rest sparse,
  // which is deepseek_moe_layers' rule with first_k_dense_replace 1.
  const std::vector<bool> sparse = deepseek_moe_layers(text, d.layers, 1);
  const vision::VisionDims v = vision::read_vision(vision, vision::Generation::kErnie4_5Vl);
  LlamaLikeSpec s;
  s.prefix = "Ernie4_5_VLMoe";
  s.norm_class = "Ernie4_5_VLMoeRMSNorm";
  s.rope = LegacyRope::kNone;
  const auto mlp = [&](TreeBuilder& b, std::int64_t layer) {
    if (sparse[static_cast<std::size_t>(layer)]) return sparse_block(b, d, m, bias);
    gated_mlp(b, "mlp", "Ernie4_5_VLMoeMLP", d.hidden, d.inter, bias, d.act);
  };

  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({"Ernie4_5_VLMoeDecoderLayer", "Ernie4_5_VLMoeVisionBlock"});
  {
    auto model = b.module("model", "Ernie4_5_VLMoeTextModel");
    decoder_base(b, s, d, mlp);
    resampler(b, vision, v.width, d.hidden);
  }
  vision::vision_tower(b, "vision_model", v, vision::Generation::kErnie4_5Vl);
  if (d.tie) nn::tied_linear(b, "lm_head", "model.embed_tokens.weight");
  else nn::linear(b, "lm_head", d.hidden, d.vocab, false);
  if (r.dims) {
    *r.dims = decoder_model_dims(text, d, read_rope(text, 500000.0, d.current_rope_dim));
    set_moe(**r.dims, {m.experts, m.active, m.shared, m.text_width, m.shared * m.text_width}, true, sparse);
  }
  return b.finish();
}

}  // namespace

const Family& ernie4_5_vl_moe_family() {
  static const Family f{"transformers",
                        {"ernie4_5_vl_moe"},
                        {{"Ernie4_5_VLMoeForConditionalGeneration", "AutoModelForImageTextToText"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
