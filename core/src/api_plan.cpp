// STUB: the planner API (issue: device-map planner) — replaced when the planner lands.
#include "memfit/api.h"

namespace memfit::api {

std::string plan(const std::string& /*request_json*/) {
  return R"({"error":{"code":"internal","message":"the device-map planner is not implemented yet"}})";
}

}  // namespace memfit::api
