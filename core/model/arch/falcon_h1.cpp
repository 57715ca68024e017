// Falcon-H1 (transformers main, models/falcon_h1/modular_falcon_h1.py and
// configuration_falcon_h1.py): FalconH1Model, FalconH1ForCausalLM.
//
// A parallel hybrid: every layer runs a Mamba-2 mixer and attention side by side on the same
// input, then an MLP.
//   model: FalconH1Model
//     embed_tokens                        Embedding [vocab, hidden]
//     layers.N: FalconH1DecoderLayer
//       feed_forward                      FalconH1MLP (Llama's gate/up/down, bias = mlp_bias)
//       mamba                             FalconH1Mixer: ssm_common.h's Mamba-2 mixer; intermediate
//                                         mamba_d_ssm (or int(mamba_expand × hidden) when null);
//                                         the gated FalconH1RMSNormGated only with mamba_rms_norm;
//                                         in_proj bias mamba_proj_bias, out_proj bias
//                                         projectors_bias; plus the model's non-persistent float32
//                                         mup_vector [1, 1, 2 × intermediate + 2 × groups × state +
//                                         heads], registered on each mixer after the layers
//       self_attn                         FalconH1Attention (Llama's q/k/v/o, bias = attention_bias)
//       input_layernorm, pre_ff_layernorm FalconH1RMSNorm [hidden]
//     final_layernorm                     FalconH1RMSNorm [hidden]
//     rotary_emb                          FalconH1RotaryEmbedding (inv_freq)
//   lm_head
//
// Cache (FalconHybridMambaAttentionDynamicCache): every layer keeps K and V of every token AND
// conv [intermediate + 2 × mamba_n_groups × mamba_d_state, mamba_d_conv] and ssm [mamba_n_heads,
// mamba_d_head, mamba_d_state] per sequence — so each layer's dims are kFull with `state` filled.
#include <fmt/format.h>

#include "families.h"
#include "llama_like.h"
#include "ssm_common.h"

namespace memfit::arch {
namespace {

ssm::Mamba2Mixer read_mixer(const Config& c, const DecoderDims& d) {
  // FalconH1Config: mamba_d_ssm defaults to 1024; only an explicit null falls back to expand.
  const auto d_ssm = c.json().find("mamba_d_ssm");
  const bool expand = d_ssm != c.json().end() && d_ssm->is_null();
  const std::int64_t inner =
      expand ? ssm::expanded(c, "mamba_expand", 2, d.hidden) : c.dim_or({"mamba_d_ssm"}, 1024);
  ssm::Mamba2Mixer m = ssm::bamba_mixer(c, d.hidden, inner, "mamba_d_ssm", d.act);
  m.out_bias = c.flag_or({"projectors_bias"}, false);
  if (c.flag_or({"mamba_rms_norm"}, false)) m.norm_class = "FalconH1RMSNormGated";
  return m;
}

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // FalconH1Config defaults.
  DecoderDims d = read_decoder_dims(c, {128000, 4096, 14336, 32, 32, 8, 8192, false});
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, false);
  d.norm_eps = read_norm_eps(c, {"rms_norm_eps"}, 1e-5);
  const bool mlp_bias = c.flag_or({"mlp_bias"}, false);
  const ssm::Mamba2Mixer m = read_mixer(c, d);
  LlamaLikeSpec s;
  s.prefix = "FalconH1";
  const ssm::StackLayout l{"FalconH1Model", "model", "embed_tokens", "final_layernorm",
                           "FalconH1RMSNorm", {"FalconH1DecoderLayer"}, d.hidden, d.vocab, d.layers,
                           d.tie};
  const auto block = [&](TreeBuilder& b, std::int64_t i) {
    auto layer = b.item(i, "FalconH1DecoderLayer");
    gated_mlp(b, "feed_forward", "FalconH1MLP", d.hidden, d.inter, mlp_bias, d.act);
    {
      auto mixer = b.module("mamba", "FalconH1Mixer");
      ssm::mamba2_tensors(b, m);
      b.buffer("mup_vector", {1, 1, m.inner + m.conv_dim() + m.heads}, DType::kF32, false);
    }
    decoder_attention(b, s, d);
    nn::rms_norm(b, "input_layernorm", d.hidden, "FalconH1RMSNorm");
    nn::rms_norm(b, "pre_ff_layernorm", d.hidden, "FalconH1RMSNorm");
  };
  TensorTree tree = ssm::build_stack(r, l, block, [&](TreeBuilder& b) {
    current_rotary(b, "rotary_emb", "FalconH1RotaryEmbedding", d.current_rope_dim);
  });
  if (r.dims) {
    LayerDims layer = ssm::attention_layer(d.heads, d.kv_heads, d.head_dim,
                                           read_rope(c, 100000.0, d.current_rope_dim));
    layer.state = m.per_sequence();
    layer.intermediate = d.inter;
    ssm::StackSizes sz{d.hidden, d.vocab, d.positions, d.tie, d.norm_eps, 0};
    *r.dims = ssm::stack_dims(sz, std::vector<LayerDims>(static_cast<std::size_t>(d.layers), layer));
  }
  return tree;
}

}  // namespace

const Family& falcon_h1_family() {
  static const Family f{"transformers",
                        {"falcon_h1"},
                        {{"FalconH1Model", "AutoModel"}, {"FalconH1ForCausalLM", "AutoModelForCausalLM"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
