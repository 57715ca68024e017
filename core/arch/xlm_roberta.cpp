// STUB — to be replaced by the real family description.
#include <fmt/format.h>

#include "common.h"
#include "families.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  throw Error(ErrorCode::kUnknownModelType,
              fmt::format("{}: the xlm_roberta family is not implemented yet", r.config.where()));
}

}  // namespace

const Family& xlm_roberta_family() {
  static const Family f{"transformers", {"xlm-roberta"}, {{"XLMRobertaModel", "AutoModel"}}, &build};
  return f;
}

}  // namespace memfit::arch
