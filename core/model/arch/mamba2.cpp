// Mamba-2 (transformers main, models/mamba2/modeling_mamba2.py and configuration_mamba2.py — the
// 5.x sources whose mixers write their state into the cache's LinearAttention layers).
//
//   Mamba2ForCausalLM
//     backbone: Mamba2Model
//       embeddings                 Embedding [vocab, hidden]
//       layers.N: Mamba2Block      norm (Mamba2RMSNorm [hidden]), mixer (Mamba2Mixer: ssm_common.h's
//                                  Mamba-2 mixer with MambaRMSNormGated, intermediate
//                                  int(expand × hidden), which must equal num_heads × head_dim)
//       norm_f                     Mamba2RMSNorm [hidden]
//     lm_head                      tied to backbone.embeddings.weight when tie_word_embeddings
//
// The mixer ignores a config's intermediate_size: it always computes int(expand × hidden). Every
// layer keeps conv [intermediate + 2 × n_groups × state_size, conv_kernel] and ssm [num_heads,
// head_dim, state_size] per sequence; no layer caches tokens.
#include "families.h"
#include "ssm_common.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // Mamba2Config defaults.
  const std::int64_t hidden = c.dim_or({"hidden_size"}, 4096);
  const std::int64_t vocab = c.dim_or({"vocab_size"}, 32768);
  const std::int64_t layers = c.repeats_or({"num_hidden_layers"}, 64);
  ssm::Mamba2Mixer m;
  m.hidden = hidden;
  m.inner = ssm::expanded(c, "expand", 2, hidden);
  m.heads = c.dim_or({"num_heads"}, 128);
  m.head_dim = c.dim_or({"head_dim"}, 64);
  m.groups = c.dim_or({"n_groups"}, 8);
  m.state = c.dim_or({"state_size"}, 128);
  m.conv_kernel = c.dim_or({"conv_kernel"}, 4);
  m.conv_bias = c.flag_or({"use_conv_bias"}, true);
  m.in_bias = m.out_bias = c.flag_or({"use_bias"}, false);
  m.act = c.string_or({"hidden_act"}, "silu");
  m.norm_class = "MambaRMSNormGated";
  ssm::check_mixer(c, m, "hidden_size × expand");
  const bool tie = c.flag_or({"tie_word_embeddings"}, false);

  const ssm::StackLayout l{"Mamba2Model", "backbone", "embeddings", "norm_f", "Mamba2RMSNorm",
                           {"Mamba2Block"}, hidden, vocab, layers, tie};
  TensorTree tree = ssm::build_stack(r, l, [&](TreeBuilder& b, std::int64_t i) {
    auto block = b.item(i, "Mamba2Block");
    nn::rms_norm(b, "norm", hidden, "Mamba2RMSNorm");
    auto mixer = b.module("mixer", "Mamba2Mixer");
    ssm::mamba2_tensors(b, m);
  });
  if (r.dims) {
    ssm::StackSizes s{hidden, vocab, 0, tie, read_norm_eps(c, {"layer_norm_epsilon"}, 1e-5), m.inner};
    *r.dims = ssm::stack_dims(s, std::vector<LayerDims>(static_cast<std::size_t>(layers),
                                                         ssm::recurrent_layer(m.per_sequence())));
  }
  return tree;
}

}  // namespace

const Family& mamba2_family() {
  static const Family f{"transformers",
                        {"mamba2"},
                        {{"Mamba2Model", "AutoModel"}, {"Mamba2ForCausalLM", "AutoModelForCausalLM"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
