// IBM Granite 3.x (transformers models/granite/modular_granite.py and
// models/granitemoe/modeling_granitemoe.py, first in 4.45; read on main): GraniteModel,
// GraniteForCausalLM; GraniteMoeModel, GraniteMoeForCausalLM.
//
// Both are Llama's layout — q/k/v/o with bias=attention_bias, head_dim = hidden / heads, one
// model-level rotary_emb (newer than 4.40: no per-layer rotary). The multipliers
// (embedding_multiplier, attention_multiplier, residual_multiplier, logits_scaling) scale
// activations, never tensors. Granite's MLP is LlamaMLP (mlp_bias). GraniteMoe's layer holds
// block_sparse_moe (only when num_local_experts > 0) = GraniteMoeMoE {activation (hidden_act),
// input_linear = GraniteMoeParallelExperts weight [experts, 2*intermediate, hidden] (gate and up
// fused), output_linear weight [experts, hidden, intermediate], router = GraniteMoeTopKGating
// {layer: Linear(hidden, experts, no bias)}}; intermediate_size is one expert's width.
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

DecoderDims granite_dims(const Config& c) {
  // GraniteConfig / GraniteMoeConfig share these defaults.
  DecoderDims d = read_decoder_dims(c, {32000, 4096, 11008, 32, 32, 0, 2048, false});
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, false);
  return d;
}

LlamaLikeSpec granite_spec(const char* prefix) {
  LlamaLikeSpec s;
  s.prefix = prefix;
  s.norm_class = std::string(prefix) + "RMSNorm";
  s.rope = LegacyRope::kNone;
  return s;
}

TensorTree build_granite(const BuildRequest& r) {
  const DecoderDims d = granite_dims(r.config);
  const bool mlp_bias = r.config.flag_or({"mlp_bias"}, false);
  return build_decoder(r, r.class_name, granite_spec("Granite"), d, [&](TreeBuilder& b, std::int64_t) {
    gated_mlp(b, "mlp", "GraniteMLP", d.hidden, d.inter, mlp_bias, d.act);
  });
}

TensorTree build_granitemoe(const BuildRequest& r) {
  const Config& c = r.config;
  const DecoderDims d = granite_dims(c);
  const std::int64_t experts = c.count_or({"num_local_experts"}, 8);
  TensorTree tree = build_decoder(r, r.class_name, granite_spec("GraniteMoe"), d, [&](TreeBuilder& b, std::int64_t) {
    if (experts == 0) return;
    auto moe = b.module("block_sparse_moe", "GraniteMoeMoE");
    nn::activation(b, "activation", d.act);
    {
      auto in = b.module("input_linear", "GraniteMoeParallelExperts");
      b.param("weight", {experts, 2 * d.inter, d.hidden});
    }
    {
      auto out = b.module("output_linear", "GraniteMoeParallelExperts");
      b.param("weight", {experts, d.hidden, d.inter});
    }
    auto router = b.module("router", "GraniteMoeTopKGating");
    nn::linear(b, "layer", d.hidden, experts, false);
  });
  if (r.dims && *r.dims)
    set_moe(**r.dims, {experts, c.count_or({"num_experts_per_tok"}, 2), 0, d.inter, 0}, false);
  return tree;
}

}  // namespace

const Family& granite_family() {
  static const Family f{"transformers",
                        {"granite"},
                        {{"GraniteModel", "AutoModel"}, {"GraniteForCausalLM", "AutoModelForCausalLM"}},
                        &build_granite};
  return f;
}

const Family& granitemoe_family() {
  static const Family f{"transformers",
                        {"granitemoe"},
                        {{"GraniteMoeModel", "AutoModel"}, {"GraniteMoeForCausalLM", "AutoModelForCausalLM"}},
                        &build_granitemoe};
  return f;
}

}  // namespace memfit::arch
