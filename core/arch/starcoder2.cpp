// STUB — to be replaced by the real family description.
#include <fmt/format.h>

#include "common.h"
#include "families.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  throw Error(ErrorCode::kUnknownModelType,
              fmt::format("{}: the starcoder2 family is not implemented yet", r.config.where()));
}

}  // namespace

const Family& starcoder2_family() {
  static const Family f{"transformers", {"starcoder2"}, {{"Starcoder2Model", "AutoModel"}}, &build};
  return f;
}

}  // namespace memfit::arch
