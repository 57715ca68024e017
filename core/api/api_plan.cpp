// plan(request): the device-map planner behind the JSON API (fields: docs/api.md).
#include <fmt/format.h>

#include "api_common.h"
#include "api_plan_request.h"
#include "memfit/api/api.h"
#include "memfit/plan/plan.h"

namespace memfit::api {
namespace {

std::uint64_t size_field(const Json& v, const std::string& what) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return v.get<std::uint64_t>();
  if (v.is_string()) {
    auto s = plan::parse_size(v.get<std::string>());
    if (!s) throw Error(ErrorCode::kInvalidArgument, fmt::format("{}: {}", what, s.error().message()));
    return *s;
  }
  throw Error(ErrorCode::kInvalidArgument, fmt::format("{}: expected a size, got {}", what, v.dump()));
}

}  // namespace

std::string string_field(const Json& j, const char* key) {
  auto v = j.find(key);
  if (v == j.end()) return {};
  if (!v->is_string()) throw Error(ErrorCode::kInvalidArgument, fmt::format("request: '{}' must be a string", key));
  return v->get<std::string>();
}

namespace {

plan::MaxMemory max_memory(const Json& j) {
  auto mm = j.find("max_memory");
  if (mm == j.end() || !mm->is_object())
    throw Error(ErrorCode::kInvalidArgument, "request: 'max_memory' must be an object device → size");
  std::vector<std::pair<plan::Device, std::uint64_t>> budgets;
  for (const auto& [k, v] : mm->items()) {
    auto d = plan::parse_device(k);
    if (!d) throw d.error();
    budgets.emplace_back(*d, size_field(v, "max_memory[" + k + "]"));
  }
  auto norm = plan::normalize_max_memory(std::move(budgets));
  if (!norm) throw norm.error();
  return *norm;
}

}  // namespace

plan::PlanRequest plan_request(const Json& j) {
  plan::PlanRequest req;
  // Without "mode": the class from_pretrained builds (as `memfit plan`); "accelerate": its maps.
  req.model = model_request(j);
  if (auto s = j.find("strategy"); s != j.end()) {
    if (!s->is_string()) throw Error(ErrorCode::kInvalidArgument, "request: 'strategy' must be a string");
    req.strategy = plan::parse_strategy(s->get<std::string>(), "strategy");
  }
  if (auto d = j.find("dtype"); d != j.end() && d->is_string() && !d->get<std::string>().empty()) {
    auto dt = dtype_from_name(d->get<std::string>());
    if (!dt) throw Error(ErrorCode::kInvalidArgument, "request: unknown dtype " + d->dump());
    req.dtype = dt;
  }
  if (auto ns = j.find("no_split"); ns != j.end() && ns->is_array())
    req.no_split = ns->get<std::vector<std::string>>();
  if (auto sd = j.find("special_dtypes"); sd != j.end() && sd->is_object())
    for (const auto& [k, v] : sd->items()) {
      auto dt = v.is_string() ? dtype_from_name(v.get<std::string>()) : std::nullopt;
      if (!dt) throw Error(ErrorCode::kInvalidArgument, "request: special_dtypes['" + k + "'] is not a dtype");
      req.special_dtypes[k] = *dt;
    }
  req.offload_buffers = j.value("offload_buffers", false);
  req.no_disk = j.value("no_disk", false);
  if (auto c = j.find("context"); c != j.end()) req.context = size_field(*c, "context");
  if (auto b = j.find("batch"); b != j.end()) req.batch = size_field(*b, "batch");
  if (auto o = j.find("overhead"); o != j.end()) req.overhead_bytes = size_field(*o, "overhead");
  return req;
}

std::string plan(const std::string& request_json) {
  return respond(request_json, [](const Json& j) {
    if (j.contains("nodes")) return pipeline_plan(j);
    plan::PlanRequest req = plan_request(j);
    req.max_memory = max_memory(j);
    auto r = plan::run_plan(req);
    if (!r) throw r.error();
    return plan::plan_to_json(*r);
  });
}

}  // namespace memfit::api
