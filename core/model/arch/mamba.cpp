// Mamba and Falcon-Mamba: one layout (transformers main, models/mamba/modeling_mamba.py and
// configuration_mamba.py — the 5.x sources with lazy_load_kernel; models/falcon_mamba/
// modular_falcon_mamba.py, which subclasses them).
//
//   <P>ForCausalLM
//     backbone: <P>Model
//       embeddings                 Embedding [vocab, hidden]
//       layers.N: <P>Block         norm (<P>RMSNorm [hidden]), mixer (<P>Mixer: ssm_common.h's
//                                  Mamba (v1) mixer; Falcon-Mamba's adds two non-persistent float32
//                                  buffers of RMS weights, b_c_rms [state] and dt_rms [inner])
//       norm_f                     <P>RMSNorm [hidden]
//     lm_head                      tied to backbone.embeddings.weight when tie_word_embeddings
//
// intermediate_size is int(expand × hidden) unless the config sets it (MambaConfig passes the
// remaining keys to PreTrainedConfig after computing it, so a config's own value wins; Falcon-Mamba
// reads it first explicitly). Every layer keeps MambaCache's state per sequence: conv
// [intermediate, conv_kernel] and ssm [intermediate, state_size]; no layer caches tokens.
#include "families.h"
#include "ssm_common.h"

namespace memfit::arch {
namespace {

struct Variant {
  const char* prefix;  // "Mamba", "FalconMamba"
  bool proj_bias;      // use_bias default: MambaConfig True, FalconMambaConfig False
  bool rms_buffers;    // Falcon-Mamba's b_c_rms / dt_rms
};

TensorTree build_variant(const BuildRequest& r, const Variant& v) {
  const Config& c = r.config;
  const std::string p = v.prefix;
  const std::int64_t hidden = c.dim_or({"hidden_size"}, 768);
  const std::int64_t vocab = c.dim_or({"vocab_size"}, 50280);
  const std::int64_t layers = c.repeats_or({"num_hidden_layers"}, 32);
  ssm::Mamba1Mixer m;
  m.hidden = hidden;
  m.inner = ssm::mamba_inner(c, hidden, 2);
  m.state = c.dim_or({"state_size"}, 16);
  m.conv_kernel = c.dim_or({"conv_kernel"}, 4);
  m.dt_rank = ssm::dt_rank(c, "time_step_rank", hidden);
  m.conv_bias = c.flag_or({"use_conv_bias"}, true);
  m.proj_bias = c.flag_or({"use_bias"}, v.proj_bias);
  m.act = c.string_or({"hidden_act"}, "silu");
  const bool tie = c.flag_or({"tie_word_embeddings"}, true);

  const ssm::StackLayout l{p + "Model", "backbone", "embeddings", "norm_f", p + "RMSNorm",
                           {p + "Block", p + "Mixer"}, hidden, vocab, layers, tie};
  TensorTree tree = ssm::build_stack(r, l, [&](TreeBuilder& b, std::int64_t i) {
    auto block = b.item(i, p + "Block");
    nn::rms_norm(b, "norm", hidden, p + "RMSNorm");
    auto mixer = b.module("mixer", p + "Mixer");
    ssm::mamba1_tensors(b, m);
    if (v.rms_buffers) {
      b.buffer("b_c_rms", {m.state}, DType::kF32, false);
      b.buffer("dt_rms", {m.inner}, DType::kF32, false);
    }
  });
  if (r.dims) {
    ssm::StackSizes s{hidden, vocab, 0, tie, read_norm_eps(c, {"layer_norm_epsilon"}, 1e-5), m.inner};
    *r.dims = ssm::stack_dims(s, std::vector<LayerDims>(static_cast<std::size_t>(layers),
                                                         ssm::recurrent_layer(m.per_sequence())));
  }
  return tree;
}

TensorTree build_mamba(const BuildRequest& r) { return build_variant(r, {"Mamba", true, false}); }
TensorTree build_falcon_mamba(const BuildRequest& r) {
  return build_variant(r, {"FalconMamba", false, true});
}

}  // namespace

const Family& mamba_family() {
  static const Family f{"transformers",
                        {"mamba"},
                        {{"MambaModel", "AutoModel"}, {"MambaForCausalLM", "AutoModelForCausalLM"}},
                        &build_mamba};
  return f;
}

const Family& falcon_mamba_family() {
  static const Family f{"transformers",
                        {"falcon_mamba"},
                        {{"FalconMambaModel", "AutoModel"},
                         {"FalconMambaForCausalLM", "AutoModelForCausalLM"}},
                        &build_falcon_mamba};
  return f;
}

}  // namespace memfit::arch
