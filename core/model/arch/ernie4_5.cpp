// Baidu ERNIE 4.5 (transformers models/ernie4_5/modular_ernie4_5.py and
// models/ernie4_5_moe/modular_ernie4_5_moe.py, first in 4.54; layout read from the 4.54-4.57
// modular files, defaults from main's configuration files): Ernie4_5Model, Ernie4_5ForCausalLM;
// Ernie4_5_MoeModel, Ernie4_5_MoeForCausalLM.
//
// Llama's layout; use_bias puts a bias on q/k/v/o and on every MLP projection. The dense model's
// head_dim defaults to 128, the MoE model's to hidden / heads. Layer i of the MoE model holds
// Ernie4_5_MoeSparseMoeBlock when (i + 1) % moe_layer_interval == 0 and moe_layer_start_index
// <= i <= moe_layer_end_index (-1: the last layer), else Ernie4_5_MoeMLP(intermediate_size).
// The block registers moe_statics {e_score_correction_bias [1, moe_num_experts], float32}, gate
// [moe_num_experts, hidden] (float32), experts.N = Ernie4_5_MoeMLP(moe_intermediate_size) and,
// when moe_num_shared_experts > 0, shared_experts = Ernie4_5_MoeMLP(moe_intermediate_size *
// moe_num_shared_experts). The MoE lm_head takes use_bias. Current transformers moves gate and
// moe_statics into a router and fuses the experts on load; the names here are the checkpoints'.
// Ernie4_5_MoePreTrainedModel: `_keep_in_fp32_modules_strict = ["gate", "moe_statics"]` (main:
// ["gate.weight", "moe_statics"]): the router and its bias stay float32 in half-precision loads.
// Not loaded: the checkpoints' multi-token-prediction weights ("mtp*": _keys_to_ignore_on_load_
// unexpected).
#include "families.h"
#include "llama_like.h"
#include "memfit/model/keep_fp32.h"

namespace memfit::arch {
namespace {

TensorTree build_dense(const BuildRequest& r) {
  const Config& c = r.config;
  // Ernie4_5Config defaults.
  DecoderDims d = read_decoder_dims(c, {103424, 1024, 3072, 18, 16, 2, 131072, true, /*head_dim=*/128});
  const bool bias = c.flag_or({"use_bias"}, false);
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = bias;
  LlamaLikeSpec s;
  s.prefix = "Ernie4_5";
  s.norm_class = "Ernie4_5RMSNorm";
  s.rope = LegacyRope::kNone;
  return build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    gated_mlp(b, "mlp", "Ernie4_5MLP", d.hidden, d.inter, bias, d.act);
  });
}

std::vector<bool> ernie_moe_layers(const Config& c, std::int64_t layers) {
  const std::int64_t interval = c.dim_or({"moe_layer_interval"}, 1);
  const std::int64_t start = c.count_or({"moe_layer_start_index"}, 1);
  const auto end_it = c.json().find("moe_layer_end_index");
  const bool end_default = end_it == c.json().end() || (end_it->is_number_integer() && end_it->get<std::int64_t>() == -1);
  const std::int64_t end = end_default ? layers - 1 : c.count({"moe_layer_end_index"});
  std::vector<bool> sparse(static_cast<std::size_t>(layers));
  for (std::int64_t i = 0; i < layers; ++i)
    sparse[static_cast<std::size_t>(i)] = (i + 1) % interval == 0 && i >= start && i <= end;
  return sparse;
}

TensorTree build_moe(const BuildRequest& r) {
  const Config& c = r.config;
  // Ernie4_5_MoeConfig defaults.
  DecoderDims d = read_decoder_dims(c, {103424, 2560, 12288, 28, 20, 4, 131072, true});
  const bool bias = c.flag_or({"use_bias"}, false);
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = bias;
  const std::int64_t experts = c.repeats_or({"moe_num_experts"}, 64);
  const std::int64_t width = c.dim_or({"moe_intermediate_size"}, 1536);
  const std::int64_t shared = c.count_or({"moe_num_shared_experts"}, 2);
  const std::vector<bool> sparse = ernie_moe_layers(c, d.layers);
  LlamaLikeSpec s;
  s.prefix = "Ernie4_5_Moe";
  s.norm_class = "Ernie4_5_MoeRMSNorm";
  s.rope = LegacyRope::kNone;
  s.lm_head_bias = bias;
  TensorTree tree = build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t layer) {
    if (!sparse[static_cast<std::size_t>(layer)])
      return gated_mlp(b, "mlp", "Ernie4_5_MoeMLP", d.hidden, d.inter, bias, d.act);
    auto moe = b.module("mlp", "Ernie4_5_MoeSparseMoeBlock");
    {
      auto statics = b.module("moe_statics", "Ernie4_5_MoeStatics");
      b.param("e_score_correction_bias", {1, experts});
    }
    nn::linear(b, "gate", d.hidden, experts, false);
    gated_experts(b, "Ernie4_5_MoeMLP", experts, d.hidden, width, bias, d.act);
    if (shared > 0) gated_mlp(b, "shared_experts", "Ernie4_5_MoeMLP", d.hidden, width * shared, bias, d.act);
  });
  keep_in_fp32(tree, {"gate", "moe_statics"}, KeepFp32::kHalfLoads);
  if (r.dims && *r.dims)
    set_moe(**r.dims, {experts, c.count_or({"moe_k"}, 6), shared, width, shared * width}, true, sparse);
  return tree;
}

}  // namespace

const Family& ernie4_5_family() {
  static const Family f{"transformers",
                        {"ernie4_5"},
                        {{"Ernie4_5Model", "AutoModel"}, {"Ernie4_5ForCausalLM", "AutoModelForCausalLM"}},
                        &build_dense};
  return f;
}

const Family& ernie4_5_moe_family() {
  static const Family f{"transformers",
                        {"ernie4_5_moe"},
                        {{"Ernie4_5_MoeModel", "AutoModel"}, {"Ernie4_5_MoeForCausalLM", "AutoModelForCausalLM"}},
                        &build_moe};
  return f;
}

}  // namespace memfit::arch
