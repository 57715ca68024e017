// BERT (transformers models/bert/modeling_bert.py, 4.40): BertModel and its heads.
//
// 4.40 gives BERT no _no_split_modules at all (device_map="auto" was refused for every BERT
// class); the ["BertEmbeddings", "BertLayer"] list on BertModel came with the SDPA rewrite in
// 4.41. accelerate 0.30.1 therefore descends to single Linear/Embedding modules for the largest
// layer: for bert-base-cased that is embeddings.word_embeddings (84.95 MB in float32).
#include <fmt/format.h>

#include "bert_common.h"
#include "families.h"
#include "family_dims.h"

namespace memfit::arch {
namespace {

constexpr bert::Defaults kBertDefaults{30522, 512, 2};  // BertConfig()
constexpr const char* kWordEmbeddings = "bert.embeddings.word_embeddings.weight";

// BertLMPredictionHead: transform (dense, LayerNorm), decoder (Linear hidden→vocab, no bias of
// its own), bias [vocab]; `self.decoder.bias = self.bias`, and tie_weights() makes
// decoder.weight the word embeddings (tie_word_embeddings defaults to true).
void lm_prediction_head(TreeBuilder& b, const bert::Dims& d) {
  auto p = b.module("predictions", "BertLMPredictionHead");
  {
    auto t = b.module("transform", "BertPredictionHeadTransform");
    nn::linear(b, "dense", d.hidden, d.hidden);
    nn::activation(b, "transform_act_fn", d.act);
    nn::layer_norm(b, "LayerNorm", d.hidden);
  }
  b.param("bias", {d.vocab});
  bert::tied_decoder(b, "decoder", d.hidden, d.vocab, d.tie, kWordEmbeddings, b.path("bias"));
}

TensorTree tree(const BuildRequest& r, const bert::Dims& d) {
  TreeBuilder b{std::string(r.class_name)};
  if (is_class(r, "BertModel")) {
    bert::model(b, d, "Bert", true);
    return b.finish();
  }
  // Heads built on BertModel(config) keep the pooler; the others use add_pooling_layer=False.
  const bool pooled = is_class(r, "BertForPreTraining") ||
                      is_class(r, "BertForNextSentencePrediction") ||
                      is_class(r, "BertForSequenceClassification") ||
                      is_class(r, "BertForMultipleChoice");
  bert::base(b, d, "bert", "Bert", pooled);
  if (is_class(r, "BertForPreTraining")) {
    auto c = b.module("cls", "BertPreTrainingHeads");
    lm_prediction_head(b, d);
    nn::linear(b, "seq_relationship", d.hidden, 2);
  } else if (is_class(r, "BertForMaskedLM") || is_class(r, "BertLMHeadModel")) {
    auto c = b.module("cls", "BertOnlyMLMHead");
    lm_prediction_head(b, d);
  } else if (is_class(r, "BertForNextSentencePrediction")) {
    auto c = b.module("cls", "BertOnlyNSPHead");
    nn::linear(b, "seq_relationship", d.hidden, 2);
  } else if (is_class(r, "BertForSequenceClassification") ||
             is_class(r, "BertForTokenClassification")) {
    nn::dropout(b, "dropout");
    nn::linear(b, "classifier", d.hidden, num_labels(r.config));
  } else if (is_class(r, "BertForMultipleChoice")) {
    nn::dropout(b, "dropout");
    nn::linear(b, "classifier", d.hidden, 1);
  } else if (is_class(r, "BertForQuestionAnswering")) {
    nn::linear(b, "qa_outputs", d.hidden, num_labels(r.config));
  } else {
    throw Error(ErrorCode::kUnknownClass,
                fmt::format("class '{}' is not described for bert", r.class_name));
  }
  return b.finish();
}

TensorTree build(const BuildRequest& r) {
  return build_with_dims(r, bert::read_dims(r.config, kBertDefaults), tree, bert::model_dims);
}

}  // namespace

const Family& bert_family() {
  static const Family f{"transformers",
                        {"bert"},
                        {{"BertModel", "AutoModel"},
                         {"BertForMaskedLM", "AutoModelForMaskedLM"},
                         {"BertForSequenceClassification", "AutoModelForSequenceClassification"},
                         {"BertLMHeadModel", "AutoModelForCausalLM"},
                         {"BertForPreTraining", "AutoModelForPreTraining"},
                         {"BertForTokenClassification", "AutoModelForTokenClassification"},
                         {"BertForQuestionAnswering", "AutoModelForQuestionAnswering"},
                         {"BertForMultipleChoice", "AutoModelForMultipleChoice"},
                         {"BertForNextSentencePrediction", "AutoModelForNextSentencePrediction"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
