// OPT (transformers models/opt/modeling_opt.py, 4.40): OPTModel, OPTForCausalLM,
// OPTForSequenceClassification, OPTForQuestionAnswering.
//
// OPTModel holds everything under `decoder` (OPTDecoder). Positions are an
// OPTLearnedPositionalEmbedding with 2 extra rows (offset 2). When word_embed_proj_dim differs
// from hidden_size, bias-free project_out [proj, hidden] and project_in [hidden, proj] are
// registered (in that order) and the token embeddings and the LM head live in the smaller
// space. The final LayerNorm exists only with do_layer_norm_before and not
// _remove_final_layer_norm (so facebook/opt-350m has none). No buffers. The one module without
// tensors is each layer's activation_fn, registered right after self_attn (dropouts are floats).
#include "common.h"
#include "dec_common.h"
#include "families.h"
#include "family_dims.h"

namespace memfit::arch {
namespace {

struct OptDims {
  std::int64_t vocab, hidden, layers, heads, ffn, positions, proj;
  bool final_norm, bias, affine, tie;
  std::string act;
};

OptDims read_dims(const Config& c) {
  OptDims d{};
  d.vocab = c.dim_or({"vocab_size"}, 50272);
  d.hidden = c.dim_or({"hidden_size"}, 768);
  d.layers = c.repeats_or({"num_hidden_layers"}, 12);
  d.heads = c.dim_or({"num_attention_heads"}, 12);
  d.ffn = c.dim_or({"ffn_dim"}, 3072);
  d.positions = c.dim_or({"max_position_embeddings"}, 2048);
  d.proj = c.dim_or({"word_embed_proj_dim"}, d.hidden);
  d.final_norm = c.flag_or({"do_layer_norm_before"}, true) &&
                 !c.flag_or({"_remove_final_layer_norm"}, false);
  d.bias = c.flag_or({"enable_bias"}, true);
  d.affine = c.flag_or({"layer_norm_elementwise_affine"}, true);
  d.tie = c.flag_or({"tie_word_embeddings"}, true);
  d.act = c.string_or({"activation_function"}, "relu");
  require_divisible(c, d.hidden, "hidden_size", d.heads, "num_attention_heads");
  return d;
}

void norm(TreeBuilder& b, std::string_view name, const OptDims& d) {
  if (d.affine) nn::layer_norm(b, name, d.hidden);
  else dec::layer_norm_no_affine(b, name);
}

void decoder(TreeBuilder& b, const OptDims& d) {
  nn::embedding(b, "embed_tokens", d.vocab, d.proj);
  nn::embedding(b, "embed_positions", d.positions + 2, d.hidden, "OPTLearnedPositionalEmbedding");
  if (d.proj != d.hidden) {
    nn::linear(b, "project_out", d.hidden, d.proj, false);
    nn::linear(b, "project_in", d.proj, d.hidden, false);
  }
  if (d.final_norm) norm(b, "final_layer_norm", d);
  auto layers = b.module("layers", "ModuleList");
  for (std::int64_t i = 0; i < d.layers; ++i) {
    auto layer = b.item(i, "OPTDecoderLayer");
    {
      auto attn = b.module("self_attn", "OPTAttention");
      nn::linear(b, "k_proj", d.hidden, d.hidden, d.bias);
      nn::linear(b, "v_proj", d.hidden, d.hidden, d.bias);
      nn::linear(b, "q_proj", d.hidden, d.hidden, d.bias);
      nn::linear(b, "out_proj", d.hidden, d.hidden, d.bias);
    }
    nn::activation(b, "activation_fn", d.act);
    norm(b, "self_attn_layer_norm", d);
    nn::linear(b, "fc1", d.hidden, d.ffn, d.bias);
    nn::linear(b, "fc2", d.ffn, d.hidden, d.bias);
    norm(b, "final_layer_norm", d);
  }
}

void model(TreeBuilder& b, const OptDims& d) {
  auto dec = b.module("decoder", "OPTDecoder");
  decoder(b, d);
}

TensorTree tree(const BuildRequest& r, const OptDims& d) {
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({"OPTDecoderLayer"});
  if (is_class(r, "OPTModel")) {
    model(b, d);
    return b.finish();
  }
  {
    auto m = b.module("model", "OPTModel");
    model(b, d);
  }
  if (is_class(r, "OPTForCausalLM")) {
    if (d.tie) nn::tied_linear(b, "lm_head", "model.decoder.embed_tokens.weight");
    else nn::linear(b, "lm_head", d.proj, d.vocab, false);
  } else if (is_class(r, "OPTForSequenceClassification")) {
    nn::linear(b, "score", d.proj, num_labels(r.config), false);
  } else {  // OPTForQuestionAnswering
    nn::linear(b, "qa_outputs", d.proj, 2, true);
  }
  return b.finish();
}

// The model's dims from the same reads (family_dims.h). OPTConfig has no epsilon key (its
// LayerNorms keep torch's 1e-5): norm_eps stays 0, unknown, as the generic reader gave it.
ModelDims model_dims(const Config& c, const OptDims& d) {
  return uniform_model_dims(c, {d.hidden, d.vocab, d.layers, d.heads, d.heads, d.hidden / d.heads,
                                d.ffn, d.positions, d.tie, 0.0});
}

TensorTree build(const BuildRequest& r) {
  return build_with_dims(r, read_dims(r.config), tree, model_dims);
}

}  // namespace

const Family& opt_family() {
  static const Family f{"transformers",
                        {"opt"},
                        {{"OPTModel", "AutoModel"},
                         {"OPTForCausalLM", "AutoModelForCausalLM"},
                         {"OPTForSequenceClassification", "AutoModelForSequenceClassification"},
                         {"OPTForQuestionAnswering", "AutoModelForQuestionAnswering"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
