// Llama (transformers models/llama/modeling_llama.py, 4.40): LlamaModel, LlamaForCausalLM,
// LlamaForSequenceClassification.
//
// 4.40 specifics (checked against the 4.40 source): LlamaModel registers no causal_mask buffer
// (4.38 did; 4.39 removed it); each LlamaAttention owns a rotary_emb with inv_freq and
// _cos_cached/_sin_cached [max_position_embeddings, head_dim]; rope_scaling "linear"/"dynamic"
// only change the rotary class. o_proj takes attention_bias too. mlp_bias (4.41+) is honoured
// because checkpoints that set it have the biases.
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // LlamaConfig defaults.
  DecoderDims d = read_decoder_dims(c, {32000, 4096, 11008, 32, 32, 0, 2048, false});
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, false);
  const bool mlp_bias = c.flag_or({"mlp_bias"}, false);
  LlamaLikeSpec s;
  s.prefix = "Llama";
  s.norm_class = "LlamaRMSNorm";
  s.rope = LegacyRope::kUnderscore;
  s.rope_class = llama_rope_class(c, "Llama");
  return build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    gated_mlp(b, "mlp", "LlamaMLP", d.hidden, d.inter, mlp_bias, d.act);
  });
}

}  // namespace

const Family& llama_family() {
  static const Family f{"transformers",
                        {"llama"},
                        {{"LlamaModel", "AutoModel"},
                         {"LlamaForCausalLM", "AutoModelForCausalLM"},
                         {"LlamaForSequenceClassification", "AutoModelForSequenceClassification"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
