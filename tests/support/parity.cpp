#include "support/parity.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "memfit/plan/plan.h"
#include "support/reference.h"

namespace memfit::test {
namespace {

using namespace memfit::plan;

// accelerate writes GPU ordinals as ints and other devices as strings.
std::string device_key(const OJson& v) {
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string budget_spec(const OJson& mm) {
  std::string spec;
  for (const auto& [k, v] : mm.items()) {
    if (!spec.empty()) spec += ",";
    spec += k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return spec;
}

std::string dtype_name(const OJson& v) {
  std::string name = v.get<std::string>();
  if (name.rfind("torch.", 0) == 0) name = name.substr(6);
  return name;
}

std::vector<std::pair<std::string, std::string>> ordered_map(const OJson& j) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [k, v] : j.items()) out.emplace_back(k, device_key(v));
  return out;
}

std::string show(const std::vector<std::pair<std::string, std::string>>& m) {
  std::string s;
  for (const auto& [k, v] : m) s += (s.empty() ? "" : ", ") + ("'" + k + "': " + v);
  return "{" + s + "}";
}

}  // namespace

const OJson* member(const OJson& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

OJson read_reference_json(const std::string& path) { return OJson::parse(read_text(path)); }

std::size_t check_plan_case(const PlanCase& c) {
  INFO("device-map case " << c.label);
  REQUIRE_MESSAGE(c.max_memory != nullptr, "the case records no max_memory");
  REQUIRE_MESSAGE((c.device_map != nullptr || c.accelerate_error != nullptr),
                  "the case records neither a device_map nor an error");
  std::size_t fields = 0;
  PlanRequest req;
  req.model.mode = Mode::kAccelerate;
  req.model.config_text = c.config_text;
  req.model.name = c.name;
  req.strategy = parse_strategy(c.strategy, "strategy");
  auto budgets = parse_max_memory(budget_spec(*c.max_memory));
  REQUIRE_MESSAGE(budgets.ok(), budgets.error().message());
  req.max_memory = *budgets;
  auto budget_text = [](const MaxMemory& mm) {
    std::string s;
    for (const auto& [d, b] : mm) s += fmt::format("{}={} ", d.key(), b);
    return s;
  };
  auto recorded_text = [](const OJson& j) {
    std::string s;
    for (const auto& [k, v] : j.items()) s += fmt::format("{}={} ", k, v.get<std::uint64_t>());
    return s;
  };
  if (c.get_max_memory) {
    CHECK_MESSAGE(budget_text(*budgets) == recorded_text(*c.get_max_memory), "get_max_memory");
    ++fields;
  }
  // infer_auto_device_map's no_split_module_classes=None means no class at all.
  req.no_split = c.no_split ? c.no_split->get<std::vector<std::string>>() : std::vector<std::string>{};
  if (c.dtype) {
    auto d = dtype_from_name(dtype_name(*c.dtype));
    REQUIRE_MESSAGE(d.has_value(), "unknown dtype " << c.dtype->dump());
    req.dtype = *d;
  }
  if (c.special_dtypes)
    for (const auto& entry : c.special_dtypes->items()) {
      const std::string given = entry.value().dump();  // clang 14: bindings cannot be captured
      auto d = dtype_from_name(dtype_name(entry.value()));
      REQUIRE_MESSAGE(d.has_value(), "unknown special dtype " << given);
      req.special_dtypes[entry.key()] = *d;
    }
  req.offload_buffers = c.offload_buffers;

  auto r = run_plan(req);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  if (c.accelerate_error) {
    auto tree = build_tree(req.model);
    REQUIRE(tree.ok());
    auto valid = check_device_map(for_era(std::move(tree).value(), true), r->device_map);
    CHECK_MESSAGE(valid.ok(), "accelerate failed (" << c.accelerate_error->get<std::string>()
                                                    << "); memfit's map is not valid: "
                                                    << (valid.ok() ? "" : valid.error().message()));
    return fields + 1;
  }

  // Keys and devices, not their order: accelerate's clean_device_map recurses over a Python set
  // of names, whose order follows PYTHONHASHSEED, so the position of a merged key varies from
  // one accelerate run to the next.
  std::vector<std::pair<std::string, std::string>> got;
  for (const auto& [k, d] : r->device_map) got.emplace_back(k, d.key());
  const auto want = ordered_map(*c.device_map);
  auto sorted = [](std::vector<std::pair<std::string, std::string>> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  CHECK_MESSAGE(sorted(got) == sorted(want), "device_map\n  accelerate: " << show(want) << "\n  memfit:     " << show(got));
  ++fields;

  if (c.bytes_per_device) {
    // accelerate's record leaves out devices that hold nothing.
    std::vector<std::pair<std::string, double>> mine, theirs;
    for (const auto& [k, v] : r->bytes_per_device)
      if (v != 0) mine.emplace_back(k, v);
    for (const auto& [k, v] : c.bytes_per_device->items()) theirs.emplace_back(k, v.get<double>());
    std::string m, t;
    for (const auto& [k, v] : mine) m += fmt::format("{}={} ", k, v);
    for (const auto& [k, v] : theirs) t += fmt::format("{}={} ", k, v);
    CHECK_MESSAGE(m == t, "bytes_per_device\n  accelerate: " << t << "\n  memfit:     " << m);
    ++fields;
  }
  if (c.balanced_max_memory && c.strategy != "sequential") {
    const std::string m = budget_text(r->max_memory), t = recorded_text(*c.balanced_max_memory);
    CHECK_MESSAGE(m == t, "get_balanced_memory\n  accelerate: " << t << "\n  memfit:     " << m);
    ++fields;
  }
  return fields;
}

}  // namespace memfit::test
