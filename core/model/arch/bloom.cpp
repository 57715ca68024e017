// BLOOM (transformers models/bloom/modeling_bloom.py, 4.40): BloomModel, BloomForCausalLM,
// BloomForSequenceClassification, BloomForTokenClassification, BloomForQuestionAnswering.
//
// ALiBi is computed in the forward pass, so BLOOM registers no buffers. The embeddings are
// followed by their own LayerNorm (word_embeddings_layernorm). BloomConfig reads `n_embed` in
// preference to hidden_size, and maps n_layer / n_head (attribute_map). Modules without
// tensors (4.40 and today): the attention's attention_dropout, the MLP's gelu_impl (BloomGelu)
// between its two linears, the token classifier's dropout.
#include "common.h"
#include "families.h"
#include "family_dims.h"

namespace memfit::arch {
namespace {

struct BloomDims {
  std::int64_t vocab, hidden, layers, heads;
  bool tie;
};

BloomDims read_dims(const Config& c) {
  BloomDims d{};
  d.vocab = c.dim_or({"vocab_size"}, 250880);
  d.hidden = c.dim_or({"n_embed", "hidden_size"}, 64);
  d.layers = c.repeats_or({"n_layer", "num_hidden_layers"}, 2);
  d.heads = c.dim_or({"n_head", "num_attention_heads"}, 8);
  d.tie = c.flag_or({"tie_word_embeddings"}, true);
  require_divisible(c, d.hidden, "hidden_size", d.heads, "n_head");
  return d;
}

void model(TreeBuilder& b, const BloomDims& d) {
  nn::embedding(b, "word_embeddings", d.vocab, d.hidden);
  nn::layer_norm(b, "word_embeddings_layernorm", d.hidden);
  {
    auto h = b.module("h", "ModuleList");
    for (std::int64_t i = 0; i < d.layers; ++i) {
      auto block = b.item(i, "BloomBlock");
      nn::layer_norm(b, "input_layernorm", d.hidden);
      {
        auto attn = b.module("self_attention", "BloomAttention");
        nn::linear(b, "query_key_value", d.hidden, 3 * d.hidden);
        nn::linear(b, "dense", d.hidden, d.hidden);
        nn::dropout(b, "attention_dropout");
      }
      nn::layer_norm(b, "post_attention_layernorm", d.hidden);
      auto mlp = b.module("mlp", "BloomMLP");
      nn::linear(b, "dense_h_to_4h", d.hidden, 4 * d.hidden);
      b.stateless("gelu_impl", "BloomGelu");
      nn::linear(b, "dense_4h_to_h", 4 * d.hidden, d.hidden);
    }
  }
  nn::layer_norm(b, "ln_f", d.hidden);
}

TensorTree tree(const BuildRequest& r, const BloomDims& d) {
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({"BloomBlock"});
  if (is_class(r, "BloomModel")) {
    model(b, d);
    return b.finish();
  }
  {
    auto t = b.module("transformer", "BloomModel");
    model(b, d);
  }
  if (is_class(r, "BloomForCausalLM")) {
    if (d.tie) nn::tied_linear(b, "lm_head", "transformer.word_embeddings.weight");
    else nn::linear(b, "lm_head", d.hidden, d.vocab, false);
  } else if (is_class(r, "BloomForSequenceClassification")) {
    nn::linear(b, "score", d.hidden, num_labels(r.config), false);
  } else if (is_class(r, "BloomForTokenClassification")) {
    nn::dropout(b, "dropout");
    nn::linear(b, "classifier", d.hidden, num_labels(r.config), true);
  } else {  // BloomForQuestionAnswering
    nn::linear(b, "qa_outputs", d.hidden, 2, true);
  }
  return b.finish();
}

// The model's dims from the same reads (family_dims.h): the MLP is 4 × hidden, and BloomConfig
// (configuration_bloom.py, 4.40) has no maximum length (ALiBi positions): max_positions 0;
// layer_norm_epsilon=1e-5.
ModelDims model_dims(const Config& c, const BloomDims& d) {
  return uniform_model_dims(c, {d.hidden, d.vocab, d.layers, d.heads, d.heads, d.hidden / d.heads,
                                4 * d.hidden, 0, d.tie,
                                read_norm_eps(c, {"layer_norm_epsilon"}, 1e-5)});
}

TensorTree build(const BuildRequest& r) {
  return build_with_dims(r, read_dims(r.config), tree, model_dims);
}

}  // namespace

const Family& bloom_family() {
  static const Family f{"transformers",
                        {"bloom"},
                        {{"BloomModel", "AutoModel"},
                         {"BloomForCausalLM", "AutoModelForCausalLM"},
                         {"BloomForSequenceClassification", "AutoModelForSequenceClassification"},
                         {"BloomForTokenClassification", "AutoModelForTokenClassification"},
                         {"BloomForQuestionAnswering", "AutoModelForQuestionAnswering"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
