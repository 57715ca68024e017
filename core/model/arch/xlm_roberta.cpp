// XLM-RoBERTa (transformers models/xlm_roberta/modeling_xlm_roberta.py, 4.40): RoBERTa's
// modules under XLMRoberta* class names (see bert_common.h).
#include "bert_common.h"
#include "families.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  // XLMRobertaConfig(): vocab_size=30522, max_position_embeddings=512, type_vocab_size=2 (the
  // checkpoints override them: xlm-roberta-base has 250002 / 514 / 1).
  return bert::build_roberta_like(r, "XLMRoberta", bert::Defaults{30522, 512, 2});
}

}  // namespace

const Family& xlm_roberta_family() {
  static const Family f{
      "transformers",
      {"xlm-roberta"},
      {{"XLMRobertaModel", "AutoModel"},
       {"XLMRobertaForMaskedLM", "AutoModelForMaskedLM"},
       {"XLMRobertaForSequenceClassification", "AutoModelForSequenceClassification"},
       {"XLMRobertaForCausalLM", "AutoModelForCausalLM"},
       {"XLMRobertaForTokenClassification", "AutoModelForTokenClassification"},
       {"XLMRobertaForQuestionAnswering", "AutoModelForQuestionAnswering"},
       {"XLMRobertaForMultipleChoice", "AutoModelForMultipleChoice"}},
      &build};
  return f;
}

}  // namespace memfit::arch
