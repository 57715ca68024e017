// Granite 4.0-H (transformers main, models/granitemoehybrid/modeling_granitemoehybrid.py — the
// file generated from modular_granitemoehybrid.py — and configuration_granitemoehybrid.py):
// GraniteMoeHybridModel, GraniteMoeHybridForCausalLM, GraniteMoeHybridForSequenceClassification.
//
//   model: GraniteMoeHybridModel
//     embed_tokens                 Embedding [vocab, hidden]
//     layers.N: GraniteMoeHybridDecoderLayer, registering (self_attn and mamba start as plain
//               None attributes, so the one that is built comes last):
//       input_layernorm, post_attention_layernorm   GraniteMoeHybridRMSNorm [hidden]
//       block_sparse_moe           GraniteMoeHybridMoE when num_local_experts > 0: activation,
//                                  input_linear.weight [experts, 2 × intermediate, hidden],
//                                  output_linear.weight [experts, hidden, intermediate],
//                                  router.layer [experts, hidden]
//       shared_mlp                 GraniteMoeHybridMLP: activation, input_linear [2 × shared, hidden],
//                                  output_linear [hidden, shared]
//       mamba | self_attn          by layer_types (all "mamba" when absent): ssm_common.h's Mamba-2
//                                  mixer (GraniteMoeHybridMambaLayer, intermediate
//                                  int(mamba_expand × hidden), GraniteMoeHybridRMSNormGated) |
//                                  GraniteMoeHybridAttention (q/k/v/o, bias attention_bias)
//     norm                         GraniteMoeHybridRMSNorm [hidden]
//     rotary_emb                   only when position_embedding_type is "rope"
//   lm_head (tied to model.embed_tokens.weight when tie_word_embeddings) | score
//
// Cache (HybridMambaAttentionDynamicCache): a Mamba layer keeps conv [mamba_expand × hidden +
// 2 × mamba_n_groups × mamba_d_state, mamba_d_conv] and ssm [mamba_n_heads, mamba_d_head,
// mamba_d_state] per sequence; an attention layer caches K and V of every token. The experts are
// 3-D tensors named input_linear / output_linear, not "experts".
#include <fmt/format.h>

#include "families.h"
#include "llama_like.h"
#include "ssm_common.h"

namespace memfit::arch {
namespace {

std::vector<bool> attention_layers(const Config& c, std::int64_t layers) {
  std::vector<bool> attn(static_cast<std::size_t>(layers), false);
  const auto types = c.string_list({"layer_types", "layers_block_type"});
  if (!types) return attn;
  if (static_cast<std::int64_t>(types->size()) != layers)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: 'layer_types' has {} entries for {} layers", c.where(), types->size(),
                            layers));
  for (std::size_t i = 0; i < types->size(); ++i) {
    const std::string& t = (*types)[i];
    if (t != "mamba" && t != "attention")
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: layer {} has type '{}'; GraniteMoeHybrid layers are 'mamba' or "
                              "'attention'", c.where(), i, t));
    attn[i] = t == "attention";
  }
  return attn;
}

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // GraniteMoeHybridConfig defaults (num_key_value_heads None: every head).
  DecoderDims d = read_decoder_dims(c, {32000, 4096, 11008, 32, 32, 0, 2048, false});
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, false);
  const std::vector<bool> attn = attention_layers(c, d.layers);
  const std::int64_t experts = c.repeats_or({"num_local_experts"}, 8);
  const std::int64_t shared = c.dim_or({"shared_intermediate_size"}, 1024);
  const bool rope = c.string_or({"position_embedding_type"}, "") == "rope";
  ssm::Mamba2Mixer m = ssm::bamba_mixer(c, d.hidden, ssm::expanded(c, "mamba_expand", 2, d.hidden),
                                        "mamba_expand × hidden_size", d.act);
  m.norm_class = "GraniteMoeHybridRMSNormGated";
  LlamaLikeSpec s;
  s.prefix = "GraniteMoeHybrid";

  const ssm::StackLayout l{"GraniteMoeHybridModel", "model", "embed_tokens", "norm",
                           "GraniteMoeHybridRMSNorm", {"GraniteMoeHybridDecoderLayer"},
                           d.hidden, d.vocab, d.layers, d.tie};
  const auto block = [&](TreeBuilder& b, std::int64_t i) {
    auto layer = b.item(i, "GraniteMoeHybridDecoderLayer");
    nn::rms_norm(b, "input_layernorm", d.hidden, "GraniteMoeHybridRMSNorm");
    nn::rms_norm(b, "post_attention_layernorm", d.hidden, "GraniteMoeHybridRMSNorm");
    if (experts > 0) {
      auto moe = b.module("block_sparse_moe", "GraniteMoeHybridMoE");
      nn::activation(b, "activation", d.act);
      {
        auto in = b.module("input_linear", "GraniteMoeHybridParallelExperts");
        b.param("weight", {experts, 2 * d.inter, d.hidden});
      }
      {
        auto out = b.module("output_linear", "GraniteMoeHybridParallelExperts");
        b.param("weight", {experts, d.hidden, d.inter});
      }
      auto router = b.module("router", "GraniteMoeHybridTopKGating");
      nn::linear(b, "layer", d.hidden, experts, false);
    }
    {
      auto mlp = b.module("shared_mlp", "GraniteMoeHybridMLP");
      nn::activation(b, "activation", d.act);
      nn::linear(b, "input_linear", d.hidden, 2 * shared, false);
      nn::linear(b, "output_linear", shared, d.hidden, false);
    }
    if (attn[static_cast<std::size_t>(i)]) {
      decoder_attention(b, s, d);
    } else {
      auto mixer = b.module("mamba", "GraniteMoeHybridMambaLayer");
      ssm::mamba2_tensors(b, m);
    }
  };
  TensorTree tree = ssm::build_stack(r, l, block, [&](TreeBuilder& b) {
    if (rope) current_rotary(b, "rotary_emb", "GraniteMoeHybridRotaryEmbedding", d.current_rope_dim);
  });
  if (r.dims) {
    const RopeDims rope_dims = rope ? read_rope(c, 10000.0, d.current_rope_dim) : RopeDims{};
    std::vector<LayerDims> layers;
    for (std::int64_t i = 0; i < d.layers; ++i) {
      layers.push_back(attn[static_cast<std::size_t>(i)]
                           ? ssm::attention_layer(d.heads, d.kv_heads, d.head_dim, rope_dims)
                           : ssm::recurrent_layer(m.per_sequence()));
      layers.back().intermediate = shared;
    }
    ssm::StackSizes sz{d.hidden, d.vocab, d.positions, d.tie, d.norm_eps, 0};
    *r.dims = ssm::stack_dims(sz, std::move(layers));
    ssm::set_moe_layers(**r.dims, {experts, c.count_or({"num_experts_per_tok"}, 2), 1, d.inter, shared},
                        std::vector<bool>(static_cast<std::size_t>(d.layers), experts > 0));
  }
  return tree;
}

}  // namespace

const Family& granitemoehybrid_family() {
  static const Family f{
      "transformers",
      {"granitemoehybrid"},
      {{"GraniteMoeHybridModel", "AutoModel"},
       {"GraniteMoeHybridForCausalLM", "AutoModelForCausalLM"},
       {"GraniteMoeHybridForSequenceClassification", "AutoModelForSequenceClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
