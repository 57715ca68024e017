// DistilBERT (transformers models/distilbert/modeling_distilbert.py, 4.40): DistilBertModel and
// its heads. DistilBertPreTrainedModel has no _no_split_modules in 4.40.
// Modules without tensors follow v4.40.0's modeling_distilbert.py (huggingface/transformers tag
// v4.40.0, 745bbfe4): every one is still registered today, some at another position.
#include <fmt/format.h>

#include "common.h"
#include "families.h"
#include "family_dims.h"

namespace memfit::arch {
namespace {

struct DistilBertDims {
  std::int64_t vocab, dim, hidden_dim, layers, heads, positions;
  bool tie;
  std::string act;  // `activation`: FFN.activation and the MLM head's activation
};

// DistilBertConfig(): vocab_size=30522, max_position_embeddings=512, n_layers=6, n_heads=12,
// dim=768, hidden_dim=4*768; attribute_map lets hidden_size / num_attention_heads /
// num_hidden_layers stand for dim / n_heads / n_layers. sinusoidal_pos_embds only changes how
// position_embeddings.weight is filled, not its shape.
DistilBertDims read_dims(const Config& c) {
  DistilBertDims d{};
  d.vocab = c.dim_or({"vocab_size"}, 30522);
  d.dim = c.dim_or({"dim", "hidden_size"}, 768);
  d.hidden_dim = c.dim_or({"hidden_dim"}, 4 * 768);
  d.layers = c.repeats_or({"n_layers", "num_hidden_layers"}, 6);
  d.heads = c.dim_or({"n_heads", "num_attention_heads"}, 12);
  d.positions = c.dim_or({"max_position_embeddings"}, 512);
  d.tie = c.flag_or({"tie_word_embeddings"}, true);
  d.act = c.string_or({"activation"}, "gelu");
  // MultiHeadSelfAttention: "self.n_heads must divide self.dim evenly".
  require_divisible(c, d.dim, "dim", d.heads, "n_heads");
  return d;
}

void model(TreeBuilder& b, const DistilBertDims& d) {
  {
    auto e = b.module("embeddings", "Embeddings");
    nn::embedding(b, "word_embeddings", d.vocab, d.dim);
    nn::embedding(b, "position_embeddings", d.positions, d.dim);
    nn::layer_norm(b, "LayerNorm", d.dim);
    nn::dropout(b, "dropout");
    // torch.arange(max_position_embeddings).expand((1, -1)), persistent=False (4.40 and today).
    b.buffer("position_ids", {1, d.positions}, DType::kI64, false);
  }
  auto t = b.module("transformer", "Transformer");
  auto list = b.module("layer", "ModuleList");
  for (std::int64_t i = 0; i < d.layers; ++i) {
    auto block = b.item(i, "TransformerBlock");
    {
      // The eager class; DistilBertFlashAttention2 subclasses it with the same tensors.
      auto a = b.module("attention", "MultiHeadSelfAttention");
      // 4.40 registers the dropout before q_lin; today's DistilBertSelfAttention after out_lin.
      nn::dropout(b, "dropout");
      nn::linear(b, "q_lin", d.dim, d.dim);
      nn::linear(b, "k_lin", d.dim, d.dim);
      nn::linear(b, "v_lin", d.dim, d.dim);
      nn::linear(b, "out_lin", d.dim, d.dim);
    }
    nn::layer_norm(b, "sa_layer_norm", d.dim);
    {
      auto f = b.module("ffn", "FFN");
      nn::dropout(b, "dropout");
      nn::linear(b, "lin1", d.dim, d.hidden_dim);
      nn::linear(b, "lin2", d.hidden_dim, d.dim);
      nn::activation(b, "activation", d.act);
    }
    nn::layer_norm(b, "output_layer_norm", d.dim);
  }
}

TensorTree tree(const BuildRequest& r, const DistilBertDims& d) {
  TreeBuilder b{std::string(r.class_name)};
  if (is_class(r, "DistilBertModel")) {
    model(b, d);
    return b.finish();
  }
  // DistilBertForMaskedLM registers its activation before the backbone.
  if (is_class(r, "DistilBertForMaskedLM")) nn::activation(b, "activation", d.act);
  {
    auto m = b.module("distilbert", "DistilBertModel");
    model(b, d);
  }
  if (is_class(r, "DistilBertForMaskedLM")) {
    nn::linear(b, "vocab_transform", d.dim, d.dim);
    nn::layer_norm(b, "vocab_layer_norm", d.dim);
    // vocab_projector = Linear(dim, vocab_size); tie_weights() shares its weight with the word
    // embeddings (_tied_weights_keys = ["vocab_projector.weight"]); the bias stays its own.
    auto p = b.module("vocab_projector", "Linear");
    if (d.tie) b.tied_param("weight", "distilbert.embeddings.word_embeddings.weight");
    else b.param("weight", {d.vocab, d.dim});
    b.param("bias", {d.vocab});
    // mlm_loss_fct = nn.CrossEntropyLoss(): a module, so a child (4.40 and today).
    b.stateless("mlm_loss_fct", "CrossEntropyLoss");
  } else if (is_class(r, "DistilBertForSequenceClassification")) {
    nn::linear(b, "pre_classifier", d.dim, d.dim);
    nn::linear(b, "classifier", d.dim, num_labels(r.config));
    nn::dropout(b, "dropout");
  } else if (is_class(r, "DistilBertForMultipleChoice")) {
    nn::linear(b, "pre_classifier", d.dim, d.dim);
    nn::linear(b, "classifier", d.dim, 1);
    nn::dropout(b, "dropout");
  } else if (is_class(r, "DistilBertForTokenClassification")) {
    nn::dropout(b, "dropout");
    nn::linear(b, "classifier", d.dim, num_labels(r.config));
  } else if (is_class(r, "DistilBertForQuestionAnswering")) {
    const std::int64_t labels = num_labels(r.config);
    if (labels != 2)
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: DistilBertForQuestionAnswering needs num_labels == 2, got {}",
                              r.config.where(), labels));
    nn::linear(b, "qa_outputs", d.dim, labels);
    nn::dropout(b, "dropout");
  } else {
    throw Error(ErrorCode::kUnknownClass,
                fmt::format("class '{}' is not described for distilbert", r.class_name));
  }
  return b.finish();
}

// The model's dims from the same reads (family_dims.h). DistilBertConfig has no epsilon key (its
// LayerNorms use 1e-12 in code): norm_eps stays 0, unknown, as the generic reader gave it.
ModelDims model_dims(const Config& c, const DistilBertDims& d) {
  return uniform_model_dims(c, {d.dim, d.vocab, d.layers, d.heads, d.heads, d.dim / d.heads,
                                d.hidden_dim, d.positions, d.tie, 0.0});
}

TensorTree build(const BuildRequest& r) {
  return build_with_dims(r, read_dims(r.config), tree, model_dims);
}

}  // namespace

const Family& distilbert_family() {
  static const Family f{
      "transformers",
      {"distilbert"},
      {{"DistilBertModel", "AutoModel"},
       {"DistilBertForMaskedLM", "AutoModelForMaskedLM"},
       {"DistilBertForSequenceClassification", "AutoModelForSequenceClassification"},
       {"DistilBertForTokenClassification", "AutoModelForTokenClassification"},
       {"DistilBertForQuestionAnswering", "AutoModelForQuestionAnswering"},
       {"DistilBertForMultipleChoice", "AutoModelForMultipleChoice"}},
      &build};
  return f;
}

}  // namespace memfit::arch
