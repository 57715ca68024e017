// Jamba (transformers models/jamba/modeling_jamba.py and configuration_jamba.py, main as of
// 4.5x): JambaModel, JambaForCausalLM, JambaForSequenceClassification.
//
//   model: JambaModel
//     embed_tokens                        Embedding [vocab, hidden]
//     layers.N                            JambaAttentionDecoderLayer when
//                                           N % attn_layer_period == attn_layer_offset,
//                                         else JambaMambaDecoderLayer
//       self_attn | mamba                 JambaAttention (q/k/v/o, no bias, no rotary: Jamba has no
//                                         positions) | JambaMambaMixer (ssm_common.h's Mamba (v1)
//                                         mixer, then dt_layernorm [dt_rank], b_layernorm and
//                                         c_layernorm [d_state])
//       feed_forward                      JambaSparseMoeBlock (router [experts, hidden], experts.E =
//                                         JambaMLP) when num_experts > 1 and
//                                         N % expert_layer_period == expert_layer_offset, else JambaMLP
//       input_layernorm, pre_ff_layernorm JambaRMSNorm [hidden]
//     final_layernorm                     JambaRMSNorm [hidden]
//   lm_head | score
// The experts keep the checkpoints' names (experts.E.gate_proj …), as Mixtral's do.
//
// Cache (HybridMambaAttentionDynamicCache): a Mamba layer keeps conv [mamba_expand × hidden,
// mamba_d_conv] and ssm [mamba_expand × hidden, mamba_d_state] per sequence; an attention layer
// caches K and V of every token. sliding_window only masks flash attention: the cache keeps every
// token, so no window rule applies.
#include <fmt/format.h>

#include "families.h"
#include "llama_like.h"
#include "ssm_common.h"

namespace memfit::arch {
namespace {

struct Period {
  std::int64_t period, offset;
  bool hits(std::int64_t layer) const { return layer % period == offset; }
};

Period read_period(const Config& c, const char* period_key, std::int64_t period_default,
                   const char* offset_key, std::int64_t offset_default) {
  const Period p{c.dim_or({period_key}, period_default), c.count_or({offset_key}, offset_default)};
  if (p.offset >= p.period)  // JambaConfig._check_supported_offset
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: '{}' ({}) must be smaller than '{}' ({})", c.where(), offset_key,
                            p.offset, period_key, p.period));
  return p;
}

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // JambaConfig defaults.
  const DecoderDims d = read_decoder_dims(c, {65536, 4096, 14336, 32, 32, 8, 262144, false});
  const Period attn = read_period(c, "attn_layer_period", 8, "attn_layer_offset", 4);
  const Period expert = read_period(c, "expert_layer_period", 2, "expert_layer_offset", 1);
  const std::int64_t experts = c.repeats_or({"num_experts"}, 16);
  const auto moe_layer = [&](std::int64_t i) { return experts > 1 && expert.hits(i); };
  ssm::Mamba1Mixer m;
  m.hidden = d.hidden;
  m.inner = ssm::checked_mul(c, c.dim_or({"mamba_expand"}, 2), d.hidden, "mamba_expand × hidden_size");
  m.state = c.dim_or({"mamba_d_state"}, 16);
  m.conv_kernel = c.dim_or({"mamba_d_conv"}, 4);
  m.dt_rank = ssm::dt_rank(c, "mamba_dt_rank", d.hidden);
  m.conv_bias = c.flag_or({"mamba_conv_bias"}, true);
  m.proj_bias = c.flag_or({"mamba_proj_bias"}, false);
  m.act = d.act;

  const auto feed_forward = [&](TreeBuilder& b, std::int64_t i) {
    if (!moe_layer(i)) return gated_mlp(b, "feed_forward", "JambaMLP", d.hidden, d.inter, false, d.act);
    auto moe = b.module("feed_forward", "JambaSparseMoeBlock");
    nn::linear(b, "router", d.hidden, experts, false);
    gated_experts(b, "JambaMLP", experts, d.hidden, d.inter, false, d.act);
  };
  LlamaLikeSpec s;
  s.prefix = "Jamba";
  const ssm::StackLayout l{"JambaModel", "model", "embed_tokens", "final_layernorm", "JambaRMSNorm",
                           {"JambaAttentionDecoderLayer", "JambaMambaDecoderLayer"},
                           d.hidden, d.vocab, d.layers, d.tie};
  TensorTree tree = ssm::build_stack(r, l, [&](TreeBuilder& b, std::int64_t i) {
    auto layer = b.item(i, attn.hits(i) ? "JambaAttentionDecoderLayer"
                                                          : "JambaMambaDecoderLayer");
    if (attn.hits(i)) {
      decoder_attention(b, s, d);
    } else {
      auto mixer = b.module("mamba", "JambaMambaMixer");
      ssm::mamba1_tensors(b, m);
      nn::rms_norm(b, "dt_layernorm", m.dt_rank, "JambaRMSNorm");
      nn::rms_norm(b, "b_layernorm", m.state, "JambaRMSNorm");
      nn::rms_norm(b, "c_layernorm", m.state, "JambaRMSNorm");
    }
    feed_forward(b, i);
    nn::rms_norm(b, "input_layernorm", d.hidden, "JambaRMSNorm");
    nn::rms_norm(b, "pre_ff_layernorm", d.hidden, "JambaRMSNorm");
  });
  if (r.dims) {
    std::vector<LayerDims> layers;
    std::vector<bool> sparse;
    for (std::int64_t i = 0; i < d.layers; ++i) {
      layers.push_back(attn.hits(i) ? ssm::attention_layer(d.heads, d.kv_heads, d.head_dim, {})
                                    : ssm::recurrent_layer(m.per_sequence()));
      layers.back().intermediate = d.inter;
      sparse.push_back(moe_layer(i));
    }
    ssm::StackSizes sz{d.hidden, d.vocab, d.positions, d.tie, d.norm_eps, 0};
    *r.dims = ssm::stack_dims(sz, std::move(layers));
    ssm::set_moe_layers(**r.dims, {experts, c.count_or({"num_experts_per_tok"}, 2), 0, d.inter, 0}, sparse);
  }
  return tree;
}

}  // namespace

const Family& jamba_family() {
  static const Family f{"transformers",
                        {"jamba"},
                        {{"JambaModel", "AutoModel"},
                         {"JambaForCausalLM", "AutoModelForCausalLM"},
                         {"JambaForSequenceClassification", "AutoModelForSequenceClassification"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
