// STUB — to be replaced by the real family description.
#include <fmt/format.h>

#include "common.h"
#include "families.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  throw Error(ErrorCode::kUnknownModelType,
              fmt::format("{}: the timm_deit family is not implemented yet", r.config.where()));
}

}  // namespace

const Family& timm_deit_family() {
  static const Family f{"timm", {"deit_base_patch16_224"}, {{"VisionTransformer", "AutoModel"}}, &build};
  return f;
}

}  // namespace memfit::arch
