// CamemBERT (transformers models/camembert/modeling_camembert.py, 4.40): RoBERTa's modules under
// Camembert* class names, the base model under `roberta` (base_model_prefix), as that file copies
// them ("Copied from transformers.models.roberta…" with Roberta->Camembert; current transformers
// subclasses RoBERTa's classes outright). Its PreTrainedModel declares no _no_split_modules.
#include "bert_common.h"
#include "families.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  // CamembertConfig(): vocab_size=30522, max_position_embeddings=512, type_vocab_size=2 (BERT's;
  // camembert-base overrides them: 32005 / 514 / 1).
  return bert::build_roberta_like(r, "Camembert", bert::Defaults{30522, 512, 2}, /*no_split=*/false);
}

}  // namespace

const Family& camembert_family() {
  static const Family f{
      "transformers",
      {"camembert"},
      {{"CamembertModel", "AutoModel"},
       {"CamembertForMaskedLM", "AutoModelForMaskedLM"},
       {"CamembertForSequenceClassification", "AutoModelForSequenceClassification"},
       {"CamembertForCausalLM", "AutoModelForCausalLM"},
       {"CamembertForTokenClassification", "AutoModelForTokenClassification"},
       {"CamembertForQuestionAnswering", "AutoModelForQuestionAnswering"},
       {"CamembertForMultipleChoice", "AutoModelForMultipleChoice"}},
      &build};
  return f;
}

}  // namespace memfit::arch
