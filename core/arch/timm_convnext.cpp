// STUB — to be replaced by the real family description.
#include <fmt/format.h>

#include "common.h"
#include "families.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  throw Error(ErrorCode::kUnknownModelType,
              fmt::format("{}: the timm_convnext family is not implemented yet", r.config.where()));
}

}  // namespace

const Family& timm_convnext_family() {
  static const Family f{"timm", {"convnext_tiny"}, {{"ConvNeXt", "AutoModel"}}, &build};
  return f;
}

}  // namespace memfit::arch
