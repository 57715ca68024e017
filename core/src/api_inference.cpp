// STUB: the inference/training API — replaced when that issue lands.
#include "memfit/api.h"

namespace memfit::api {

std::string inference(const std::string& /*request_json*/) {
  return R"({"error":{"code":"internal","message":"inference/training estimates are not implemented yet"}})";
}

}  // namespace memfit::api
