// ELECTRA (transformers models/electra/modeling_electra.py, 4.40): ElectraModel and its heads.
// BERT's encoder under Electra* class names (see bert_common.h), after embeddings embedding_size
// wide and, when that differs from hidden_size, an embeddings_project Linear; no pooler. The
// discriminator's head (ForPreTraining) scores each token; the generator's (ForMaskedLM,
// ForCausalLM) projects back to embedding_size before its LM head, tied to the word embeddings.
// ElectraPreTrainedModel declares no _no_split_modules.
#include "bert_common.h"
#include "families.h"
#include "family_dims.h"

namespace memfit::arch {
namespace {

struct Dims {
  bert::Dims bert;
  std::int64_t embedding_size;
};

Dims read(const Config& c) {
  // ElectraConfig(): vocab_size=30522, embedding_size=128, hidden_size=256, num_attention_heads=4,
  // intermediate_size=1024, max_position_embeddings=512, type_vocab_size=2.
  return {bert::read_dims(c, bert::Defaults{30522, 512, 2, 256, 4, 1024}), c.dim_or({"embedding_size"}, 128)};
}

// ElectraGeneratorPredictions: activation (gelu), LayerNorm and dense (hidden → embedding_size);
// then generator_lm_head (embedding_size → vocab), its weight the word embeddings when tied.
void generator_head(TreeBuilder& b, const Dims& dims) {
  const bert::Dims& d = dims.bert;
  {
    auto g = b.module("generator_predictions", "ElectraGeneratorPredictions");
    nn::activation(b, "activation", "gelu");
    nn::layer_norm(b, "LayerNorm", dims.embedding_size);
    nn::linear(b, "dense", d.hidden, dims.embedding_size);
  }
  auto h = b.module("generator_lm_head", "Linear");
  if (d.tie) b.tied_param("weight", "electra.embeddings.word_embeddings.weight");
  else b.param("weight", {d.vocab, dims.embedding_size});
  b.param("bias", {d.vocab});
}

// SequenceSummary (modeling_utils.py) as ElectraConfig sets it: summary_use_proj (true) makes
// `summary` a Linear to hidden_size (num_labels with summary_proj_to_labels), summary_activation
// ("gelu") the activation, summary_first_dropout / summary_last_dropout (0.1) > 0 the dropouts;
// each otherwise an Identity.
void sequence_summary(TreeBuilder& b, const Config& c, const bert::Dims& d) {
  auto s = b.module("sequence_summary", "SequenceSummary");
  // A key set to null reads as Python's None: falsy, not ElectraConfig's default.
  auto is_null = [&](const char* key) { return c.json().contains(key) && c.json().at(key).is_null(); };
  if (!is_null("summary_use_proj") && c.flag_or({"summary_use_proj"}, true)) {
    const bool to_labels = c.flag_or({"summary_proj_to_labels"}, false) && num_labels(c) > 0;
    nn::linear(b, "summary", d.hidden, to_labels ? num_labels(c) : d.hidden);
  } else {
    b.stateless("summary", "Identity");
  }
  const std::string act = is_null("summary_activation") ? "" : c.string_or({"summary_activation"}, "gelu");
  if (act.empty()) b.stateless("activation", "Identity");
  else nn::activation(b, "activation", act);
  auto dropout = [&](const char* name, const char* key, double fallback) {
    if (!is_null(key) && c.number_or({key}, fallback) > 0) nn::dropout(b, name);
    else b.stateless(name, "Identity");
  };
  dropout("first_dropout", "summary_first_dropout", 0);
  dropout("last_dropout", "summary_last_dropout", 0.1);
}

void model(TreeBuilder& b, const Dims& dims) {
  const bert::Dims& d = dims.bert;
  bert::embeddings(b, d, "Electra", dims.embedding_size);
  if (dims.embedding_size != d.hidden) nn::linear(b, "embeddings_project", dims.embedding_size, d.hidden);
  bert::encoder(b, d, "Electra");
}

TensorTree tree(const BuildRequest& r, const Dims& dims) {
  const bert::Dims& d = dims.bert;
  TreeBuilder b{std::string(r.class_name)};
  const std::string_view cls = r.class_name;
  if (cls == "ElectraModel") {
    model(b, dims);
    return b.finish();
  }
  {
    auto m = b.module("electra", "ElectraModel");
    model(b, dims);
  }
  const std::string_view head = cls.substr(std::string_view("Electra").size());
  if (head == "ForPreTraining") {
    auto p = b.module("discriminator_predictions", "ElectraDiscriminatorPredictions");
    nn::linear(b, "dense", d.hidden, d.hidden);
    nn::activation(b, "activation", d.act);
    nn::linear(b, "dense_prediction", d.hidden, 1);
  } else if (head == "ForMaskedLM" || head == "ForCausalLM") {
    generator_head(b, dims);
  } else if (head == "ForSequenceClassification") {
    // ElectraClassificationHead: RoBERTa's with a gelu activation module after dense.
    auto h = b.module("classifier", "ElectraClassificationHead");
    nn::linear(b, "dense", d.hidden, d.hidden);
    nn::activation(b, "activation", "gelu");
    nn::dropout(b, "dropout");
    nn::linear(b, "out_proj", d.hidden, num_labels(r.config));
  } else if (head == "ForMultipleChoice") {
    sequence_summary(b, r.config, d);
    nn::linear(b, "classifier", d.hidden, 1);
  } else if (!bert::shared_head(b, head, d.hidden, r.config)) {
    bert::unknown_class(r.class_name);
  }
  return b.finish();
}

ModelDims dims_of(const Config& c, const Dims& d) { return bert::model_dims(c, d.bert); }

TensorTree build(const BuildRequest& r) { return build_with_dims(r, read(r.config), tree, dims_of); }

}  // namespace

const Family& electra_family() {
  static const Family f{
      "transformers",
      {"electra"},
      {{"ElectraModel", "AutoModel"},
       {"ElectraForPreTraining", "AutoModelForPreTraining"},
       {"ElectraForMaskedLM", "AutoModelForMaskedLM"},
       {"ElectraForCausalLM", "AutoModelForCausalLM"},
       {"ElectraForSequenceClassification", "AutoModelForSequenceClassification"},
       {"ElectraForTokenClassification", "AutoModelForTokenClassification"},
       {"ElectraForQuestionAnswering", "AutoModelForQuestionAnswering"},
       {"ElectraForMultipleChoice", "AutoModelForMultipleChoice"}},
      &build};
  return f;
}

}  // namespace memfit::arch
