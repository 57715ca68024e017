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
//
// GraniteMoeShared (models/granitemoeshared/modular_granitemoeshared.py and
// configuration_granitemoeshared.py, first in 4.49; read on main): GraniteMoeSharedModel,
// GraniteMoeSharedForCausalLM. GraniteMoe's layer, plus — when shared_intermediate_size (default 0)
// is not 0 — shared_mlp = GraniteMoeSharedMLP {activation, input_linear [2 × shared, hidden],
// output_linear [hidden, shared], no biases}, registered after the layer's two norms (the subclass
// sets it after GraniteMoeDecoderLayer.__init__). Every token goes through it besides its top-k
// experts.
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

// GraniteMoe's block_sparse_moe, classes named with `prefix`; nothing when there are no experts.
void granite_moe_block(TreeBuilder& b, const std::string& prefix, const DecoderDims& d, std::int64_t experts) {
  if (experts == 0) return;
  auto moe = b.module("block_sparse_moe", prefix + "MoE");
  nn::activation(b, "activation", d.act);
  {
    auto in = b.module("input_linear", prefix + "ParallelExperts");
    b.param("weight", {experts, 2 * d.inter, d.hidden});
  }
  {
    auto out = b.module("output_linear", prefix + "ParallelExperts");
    b.param("weight", {experts, d.hidden, d.inter});
  }
  auto router = b.module("router", prefix + "TopKGating");
  nn::linear(b, "layer", d.hidden, experts, false);
}

// GraniteMoe and GraniteMoeShared (`shared`: shared_intermediate_size, 0 for none).
TensorTree build_moe(const BuildRequest& r, const std::string& prefix, std::int64_t shared) {
  const Config& c = r.config;
  const DecoderDims d = granite_dims(c);
  const std::int64_t experts = c.count_or({"num_local_experts"}, 8);
  const auto moe = [&](TreeBuilder& b, std::int64_t) { granite_moe_block(b, prefix, d, experts); };
  const auto shared_mlp = [&](TreeBuilder& b, std::int64_t) {
    auto mlp = b.module("shared_mlp", prefix + "MLP");
    nn::activation(b, "activation", d.act);
    nn::linear(b, "input_linear", d.hidden, 2 * shared, false);
    nn::linear(b, "output_linear", shared, d.hidden, false);
  };
  TensorTree tree = build_decoder(r, r.class_name, granite_spec(prefix.c_str()), d, moe, {},
                                  shared > 0 ? LayerFn(shared_mlp) : LayerFn());
  if (r.dims && *r.dims)
    set_moe(**r.dims, {experts, c.count_or({"num_experts_per_tok"}, 2), shared > 0 ? 1 : 0, d.inter, shared},
            false);
  return tree;
}

TensorTree build_granitemoe(const BuildRequest& r) { return build_moe(r, "GraniteMoe", 0); }

TensorTree build_granitemoeshared(const BuildRequest& r) {
  return build_moe(r, "GraniteMoeShared", r.config.count_or({"shared_intermediate_size"}, 0));
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

const Family& granitemoeshared_family() {
  static const Family f{"transformers",
                        {"granitemoeshared"},
                        {{"GraniteMoeSharedModel", "AutoModel"},
                         {"GraniteMoeSharedForCausalLM", "AutoModelForCausalLM"}},
                        &build_granitemoeshared};
  return f;
}

}  // namespace memfit::arch
