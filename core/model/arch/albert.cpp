// ALBERT (transformers models/albert/modeling_albert.py, 4.40): AlbertModel and its heads.
// Factorized embeddings (embedding_size, then embedding_hidden_mapping_in to hidden_size) and
// shared layers: num_hidden_groups groups of inner_group_num AlbertLayers, reused across the
// num_hidden_layers passes, so only the groups hold parameters. AlbertPreTrainedModel has no
// _no_split_modules in 4.40.
// Modules without tensors follow v4.40.0's modeling_albert.py (huggingface/transformers tag
// v4.40.0, 745bbfe4): every one is still registered today, some at another position.
#include <fmt/format.h>

#include "bert_common.h"
#include "families.h"
#include "family_dims.h"

namespace memfit::arch {
namespace {

struct AlbertDims {
  std::int64_t vocab, embedding, hidden, layers, groups, inner_groups, heads, head_size, inter,
      positions, type_vocab;
  bool relative, tie;
  std::string act;  // hidden_act: AlbertLayer.activation and AlbertMLMHead.activation
};

// AlbertConfig(): vocab_size=30000, embedding_size=128, hidden_size=4096, num_hidden_layers=12,
// num_hidden_groups=1, num_attention_heads=64, intermediate_size=16384, inner_group_num=1,
// max_position_embeddings=512, type_vocab_size=2 (the defaults are ALBERT-xxlarge's).
AlbertDims read_dims(const Config& c) {
  AlbertDims d{};
  d.vocab = c.dim_or({"vocab_size"}, 30000);
  d.embedding = c.dim_or({"embedding_size"}, 128);
  d.hidden = c.dim_or({"hidden_size"}, 4096);
  // num_hidden_layers only sets how many times the shared groups run: no tensors of its own.
  d.layers = c.repeats_or({"num_hidden_layers"}, 12);
  d.groups = c.repeats_or({"num_hidden_groups"}, 1);
  d.inner_groups = c.repeats_or({"inner_group_num"}, 1);
  d.heads = c.dim_or({"num_attention_heads"}, 64);
  d.inter = c.dim_or({"intermediate_size"}, 16384);
  d.positions = c.dim_or({"max_position_embeddings"}, 512);
  d.type_vocab = c.dim_or({"type_vocab_size"}, 2);
  // AlbertAttention skips BERT's divisibility check (an AlbertConfig always has
  // embedding_size) and uses hidden_size // num_attention_heads.
  d.head_size = d.hidden / d.heads;
  if (d.head_size < 1)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: 'num_attention_heads' ({}) exceeds 'hidden_size' ({})",
                            c.where(), d.heads, d.hidden));
  const std::string pet = c.string_or({"position_embedding_type"}, "absolute");
  d.relative = pet == "relative_key" || pet == "relative_key_query";
  d.tie = c.flag_or({"tie_word_embeddings"}, true);
  d.act = c.string_or({"hidden_act"}, "gelu_new");
  return d;
}

void albert_layer(TreeBuilder& b, const AlbertDims& d) {
  nn::layer_norm(b, "full_layer_layer_norm", d.hidden);
  {
    // query/key/value, dense, LayerNorm (and distance_embedding for relative positions).
    auto a = b.module("attention", "AlbertAttention");
    const std::int64_t all_head = d.heads * d.head_size;
    nn::linear(b, "query", d.hidden, all_head);
    nn::linear(b, "key", d.hidden, all_head);
    nn::linear(b, "value", d.hidden, all_head);
    // 4.40 registers both dropouts after value; today's AlbertAttention before query.
    nn::dropout(b, "attention_dropout");
    nn::dropout(b, "output_dropout");
    nn::linear(b, "dense", d.hidden, d.hidden);
    nn::layer_norm(b, "LayerNorm", d.hidden);
    if (d.relative) nn::embedding(b, "distance_embedding", 2 * d.positions - 1, d.head_size);
  }
  nn::linear(b, "ffn", d.hidden, d.inter);
  nn::linear(b, "ffn_output", d.inter, d.hidden);
  nn::activation(b, "activation", d.act);
  nn::dropout(b, "dropout");
}

void model(TreeBuilder& b, const AlbertDims& d, bool pooling) {
  {
    auto e = b.module("embeddings", "AlbertEmbeddings");
    nn::embedding(b, "word_embeddings", d.vocab, d.embedding);
    nn::embedding(b, "position_embeddings", d.positions, d.embedding);
    nn::embedding(b, "token_type_embeddings", d.type_vocab, d.embedding);
    nn::layer_norm(b, "LayerNorm", d.embedding);
    nn::dropout(b, "dropout");
    // Both persistent=False, int64, in 4.40 and today.
    b.buffer("position_ids", {1, d.positions}, DType::kI64, false);
    b.buffer("token_type_ids", {1, d.positions}, DType::kI64, false);
  }
  {
    auto enc = b.module("encoder", "AlbertTransformer");
    nn::linear(b, "embedding_hidden_mapping_in", d.embedding, d.hidden);
    auto groups = b.module("albert_layer_groups", "ModuleList");
    for (std::int64_t g = 0; g < d.groups; ++g) {
      auto group = b.item(g, "AlbertLayerGroup");
      auto layers = b.module("albert_layers", "ModuleList");
      for (std::int64_t i = 0; i < d.inner_groups; ++i) {
        auto l = b.item(i, "AlbertLayer");
        albert_layer(b, d);
      }
    }
  }
  if (pooling) {
    nn::linear(b, "pooler", d.hidden, d.hidden);
    b.stateless("pooler_activation", "Tanh");
  }
}

// AlbertMLMHead: LayerNorm(embedding_size), bias [vocab], dense (hidden→embedding),
// decoder (embedding→vocab); decoder.bias is the head's bias and, after tie_weights(),
// decoder.weight is the word embeddings.
void mlm_head(TreeBuilder& b, const AlbertDims& d) {
  auto p = b.module("predictions", "AlbertMLMHead");
  nn::layer_norm(b, "LayerNorm", d.embedding);
  b.param("bias", {d.vocab});
  nn::linear(b, "dense", d.hidden, d.embedding);
  bert::tied_decoder(b, "decoder", d.embedding, d.vocab, d.tie,
                     "albert.embeddings.word_embeddings.weight", b.path("bias"));
  nn::activation(b, "activation", d.act);
}

TensorTree tree(const BuildRequest& r, const AlbertDims& d) {
  TreeBuilder b{std::string(r.class_name)};
  if (is_class(r, "AlbertModel")) {
    model(b, d, true);
    return b.finish();
  }
  const bool pooled = is_class(r, "AlbertForPreTraining") ||
                      is_class(r, "AlbertForSequenceClassification") ||
                      is_class(r, "AlbertForMultipleChoice");
  {
    auto m = b.module("albert", "AlbertModel");
    model(b, d, pooled);
  }
  if (is_class(r, "AlbertForPreTraining")) {
    mlm_head(b, d);
    auto sop = b.module("sop_classifier", "AlbertSOPHead");
    nn::dropout(b, "dropout");
    nn::linear(b, "classifier", d.hidden, num_labels(r.config));
  } else if (is_class(r, "AlbertForMaskedLM")) {
    mlm_head(b, d);
  } else if (is_class(r, "AlbertForSequenceClassification") ||
             is_class(r, "AlbertForTokenClassification")) {
    nn::dropout(b, "dropout");
    nn::linear(b, "classifier", d.hidden, num_labels(r.config));
  } else if (is_class(r, "AlbertForQuestionAnswering")) {
    nn::linear(b, "qa_outputs", d.hidden, num_labels(r.config));
  } else if (is_class(r, "AlbertForMultipleChoice")) {
    nn::dropout(b, "dropout");
    nn::linear(b, "classifier", d.hidden, 1);
  } else {
    throw Error(ErrorCode::kUnknownClass,
                fmt::format("class '{}' is not described for albert", r.class_name));
  }
  return b.finish();
}

// The model's dims from the same reads (family_dims.h): num_hidden_layers passes, each through a
// layer of the one shape. AlbertConfig (configuration_albert.py, 4.40): layer_norm_eps=1e-12.
ModelDims model_dims(const Config& c, const AlbertDims& d) {
  return uniform_model_dims(c, {d.hidden, d.vocab, d.layers, d.heads, d.heads, d.head_size, d.inter,
                                d.positions, d.tie, read_norm_eps(c, {"layer_norm_eps"}, 1e-12)});
}

TensorTree build(const BuildRequest& r) {
  return build_with_dims(r, read_dims(r.config), tree, model_dims);
}

}  // namespace

const Family& albert_family() {
  static const Family f{
      "transformers",
      {"albert"},
      {{"AlbertModel", "AutoModel"},
       {"AlbertForMaskedLM", "AutoModelForMaskedLM"},
       {"AlbertForSequenceClassification", "AutoModelForSequenceClassification"},
       {"AlbertForPreTraining", "AutoModelForPreTraining"},
       {"AlbertForTokenClassification", "AutoModelForTokenClassification"},
       {"AlbertForQuestionAnswering", "AutoModelForQuestionAnswering"},
       {"AlbertForMultipleChoice", "AutoModelForMultipleChoice"}},
      &build};
  return f;
}

}  // namespace memfit::arch
