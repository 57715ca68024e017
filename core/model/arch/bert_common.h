// The BERT encoder as transformers 4.40 writes it (models/bert/modeling_bert.py), shared by the
// families that copy it module for module: BERT, RoBERTa and XLM-RoBERTa ("Copied from
// transformers.models.bert..." with the class prefix replaced). Only the class names differ.
// Modules without tensors, as 4.40 (and current transformers) register them: the embeddings'
// dropout after LayerNorm; the self-attention's dropout after value (before a relative
// distance_embedding); each output's dropout after its LayerNorm; the intermediate's
// intermediate_act_fn; the pooler's activation (Tanh); the heads' dropouts before classifiers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common.h"
#include "memfit/model/arch.h"

namespace memfit::arch::bert {

// The configuration class defaults that differ between BertConfig, RobertaConfig and
// XLMRobertaConfig (everything else is the same: hidden 768, 12 layers, 12 heads, 3072).
struct Defaults {
  std::int64_t vocab;
  std::int64_t positions;
  std::int64_t type_vocab;
  std::int64_t hidden = 768;  // ElectraConfig's differ (256, 4 heads, 1024)
  std::int64_t heads = 12;
  std::int64_t inter = 3072;
};

struct Dims {
  std::int64_t vocab, hidden, layers, heads, head_size, inter, positions, type_vocab;
  bool relative;         // position_embedding_type is relative_key or relative_key_query
  bool cross_attention;  // add_cross_attention
  bool tie;              // tie_word_embeddings (PretrainedConfig default: true)
  std::string act;       // hidden_act: the intermediate's (and the MLM transform's) activation
};

Dims read_dims(const Config& c, const Defaults& def);

// The model's dims from the same reads (family_dims.h). BertConfig, RobertaConfig and
// XLMRobertaConfig (4.40): layer_norm_eps=1e-12.
ModelDims model_dims(const Config& c, const Dims& d);

// <Prefix>Model's submodules, in registration order: embeddings, encoder and (when `pooling`)
// pooler. `prefix` is "Bert", "Roberta" or "XLMRoberta".
void model(TreeBuilder& b, const Dims& d, std::string_view prefix, bool pooling);

// <Prefix>Embeddings `embeddings` with tables `width` wide (hidden_size; ELECTRA's embedding_size),
// and <Prefix>Encoder `encoder`: the parts model() registers, for families that put others
// between them.
void embeddings(TreeBuilder& b, const Dims& d, std::string_view prefix, std::int64_t width);
void encoder(TreeBuilder& b, const Dims& d, std::string_view prefix);

// The module that holds the base model inside a head class, e.g. {"bert", "BertModel"}.
void base(TreeBuilder& b, const Dims& d, std::string_view attr, std::string_view prefix,
          bool pooling);

// An output Linear `name` (weight [out, in]) as the MLM heads leave it after tie_weights():
// the weight is `embeddings_weight` when `tie` (else its own), and the bias is always the
// head's own, already added `bias_target` (their `self.decoder.bias = self.bias` link).
void tied_decoder(TreeBuilder& b, std::string_view name, std::int64_t in, std::int64_t out,
                  bool tie, const std::string& embeddings_weight, const std::string& bias_target);

// The heads the BERT-shaped families share after their base model, by the class name's suffix:
// ForTokenClassification (dropout, classifier), ForQuestionAnswering (qa_outputs),
// ForMultipleChoice (dropout, classifier to 1 over the pooled output) and, when
// `classification_head` names a class, ForSequenceClassification as RoBERTa's
// <Prefix>ClassificationHead (dense, dropout, out_proj). False for any other head.
bool shared_head(TreeBuilder& b, std::string_view suffix, std::int64_t hidden, const Config& c,
                 std::string_view classification_head = {});

// The error for a class the family does not describe.
[[noreturn]] void unknown_class(std::string_view class_name);

}  // namespace memfit::arch::bert

namespace memfit::arch::bert {

// RoBERTa and XLM-RoBERTa (modeling_roberta.py / modeling_xlm_roberta.py, 4.40): the BERT
// encoder under `roberta`, with RoBERTa's own heads. `prefix` is "Roberta" or "XLMRoberta";
// the request's class is <prefix>Model, <prefix>ForMaskedLM, <prefix>ForCausalLM,
// <prefix>ForSequenceClassification, <prefix>ForTokenClassification,
// <prefix>ForQuestionAnswering or <prefix>ForMultipleChoice.
// `no_split`: whether <prefix>PreTrainedModel declares _no_split_modules in 4.40 (RoBERTa and
// XLM-RoBERTa do; CamemBERT's does not, so accelerate may split any module of it).
TensorTree build_roberta_like(const BuildRequest& r, std::string_view prefix,
                              const Defaults& def, bool no_split = true);

}  // namespace memfit::arch::bert
