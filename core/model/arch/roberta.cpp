// RoBERTa (transformers models/roberta/modeling_roberta.py, 4.40): RobertaModel and its heads.
// The encoder is BERT's, module for module (see bert_common.h); RobertaEmbeddings re-creates
// position_embeddings with padding_idx, which changes no shape or order.
#include "bert_common.h"
#include "families.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  // RobertaConfig(): vocab_size=50265, max_position_embeddings=512, type_vocab_size=2.
  return bert::build_roberta_like(r, "Roberta", bert::Defaults{50265, 512, 2});
}

}  // namespace

const Family& roberta_family() {
  static const Family f{
      "transformers",
      {"roberta"},
      {{"RobertaModel", "AutoModel"},
       {"RobertaForMaskedLM", "AutoModelForMaskedLM"},
       {"RobertaForSequenceClassification", "AutoModelForSequenceClassification"},
       {"RobertaForCausalLM", "AutoModelForCausalLM"},
       {"RobertaForTokenClassification", "AutoModelForTokenClassification"},
       {"RobertaForQuestionAnswering", "AutoModelForQuestionAnswering"},
       {"RobertaForMultipleChoice", "AutoModelForMultipleChoice"}},
      &build};
  return f;
}

}  // namespace memfit::arch
