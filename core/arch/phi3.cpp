// STUB — to be replaced by the real family description.
#include <fmt/format.h>

#include "common.h"
#include "families.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  throw Error(ErrorCode::kUnknownModelType,
              fmt::format("{}: the phi3 family is not implemented yet", r.config.where()));
}

}  // namespace

const Family& phi3_family() {
  static const Family f{"transformers", {"phi3"}, {{"Phi3Model", "AutoModel"}}, &build};
  return f;
}

}  // namespace memfit::arch
