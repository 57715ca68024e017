// STUB — to be replaced by the real family description.
#include <fmt/format.h>

#include "common.h"
#include "families.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  throw Error(ErrorCode::kUnknownModelType,
              fmt::format("{}: the qwen2 family is not implemented yet", r.config.where()));
}

}  // namespace

const Family& qwen2_family() {
  static const Family f{"transformers", {"qwen2"}, {{"Qwen2Model", "AutoModel"}}, &build};
  return f;
}

}  // namespace memfit::arch
