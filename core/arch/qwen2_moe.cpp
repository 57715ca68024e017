// STUB — to be replaced by the real family description.
#include <fmt/format.h>

#include "common.h"
#include "families.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  throw Error(ErrorCode::kUnknownModelType,
              fmt::format("{}: the qwen2_moe family is not implemented yet", r.config.where()));
}

}  // namespace

const Family& qwen2_moe_family() {
  static const Family f{"transformers", {"qwen2_moe"}, {{"Qwen2MoeModel", "AutoModel"}}, &build};
  return f;
}

}  // namespace memfit::arch
