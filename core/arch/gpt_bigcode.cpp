// STUB — to be replaced by the real family description.
#include <fmt/format.h>

#include "common.h"
#include "families.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  throw Error(ErrorCode::kUnknownModelType,
              fmt::format("{}: the gpt_bigcode family is not implemented yet", r.config.where()));
}

}  // namespace

const Family& gpt_bigcode_family() {
  static const Family f{"transformers", {"gpt_bigcode"}, {{"GPTBigCodeModel", "AutoModel"}}, &build};
  return f;
}

}  // namespace memfit::arch
