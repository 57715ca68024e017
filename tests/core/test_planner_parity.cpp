// Planner parity with the real accelerate 0.30.1 (../shared/reference/planner/*.json): every
// case must give the identical device map (keys and devices; order does not matter) and, when the
// case records them, the identical bytes per device.
//
// The reference format could not be seen when this was written, so it is read defensively: a
// file is either one case or {"cases"|"plans": [...]} sharing a model; a case names its budgets
// ("max_memory"), strategy ("device_map"/"strategy" as a string, default "auto"), and optional
// no_split_module_classes, dtype, special_dtypes, offload_buffers; the expected map is the
// "device_map" object (or "expected"/"result"). A case this harness cannot read FAILS with the
// reason, so a format change is noticed rather than silently passing.
#include <doctest/doctest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "memfit/plan/plan.h"
#include "support/reference.h"

using namespace memfit;
using namespace memfit::plan;
using nlohmann::json;

namespace {

const json* first_of(const json& j, std::initializer_list<const char*> keys) {
  if (!j.is_object()) return nullptr;
  for (const char* k : keys)
    if (j.contains(k) && !j[k].is_null()) return &j[k];
  return nullptr;
}

std::string device_key(const json& v) {
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (s.rfind("cuda:", 0) == 0) s = s.substr(5);
    return s;
  }
  return v.dump();
}

// "max_memory": {"0": 1000, "cpu": "2GiB"} → the planner's budgets.
Result<MaxMemory> budgets_of(const json& mm) {
  std::string spec;
  for (const auto& [k, v] : mm.items()) {
    if (!spec.empty()) spec += ",";
    spec += device_key(json(k)) + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return parse_max_memory(spec);
}

std::string config_text_for(const std::string& ref_dir, const json& file, const std::string& stem) {
  if (const json* c = first_of(file, {"config"}); c && c->is_object()) return c->dump();
  std::string name = stem;
  if (const json* n = first_of(file, {"model_name", "name", "model_id", "model"}); n && n->is_string())
    name = n->get<std::string>();
  for (std::string candidate : {stem, name}) {
    for (auto p = candidate.find('/'); p != std::string::npos; p = candidate.find('/'))
      candidate.replace(p, 1, "--");
    const std::string path = ref_dir + "/configs/" + candidate + "/config.json";
    if (test::file_exists(path)) return test::read_text(path);
  }
  return {};
}

void check_case(const std::string& ref_dir, const json& file, const json& c, const std::string& label) {
  INFO("planner case " << label);
  PlanRequest req;
  req.model.mode = Mode::kAccelerate;
  req.model.config_text = config_text_for(ref_dir, file, label.substr(0, label.find('#')));
  REQUIRE_MESSAGE(!req.model.config_text.empty(), "no config for this case");
  if (const json* n = first_of(file, {"model_name", "name", "model_id", "model"}); n && n->is_string())
    req.model.name = n->get<std::string>();
  const json* mm = first_of(c, {"max_memory", "budgets"});
  REQUIRE_MESSAGE((mm && mm->is_object()), "the case has no max_memory object");
  auto budgets = budgets_of(*mm);
  REQUIRE_MESSAGE(budgets.ok(), budgets.error().message());
  req.max_memory = *budgets;
  if (const json* s = first_of(c, {"strategy", "device_map_strategy"}); s && s->is_string())
    req.strategy = s->get<std::string>();
  else if (const json* d = first_of(c, {"device_map"}); d && d->is_string())
    req.strategy = d->get<std::string>();
  if (const json* ns = first_of(c, {"no_split_module_classes", "no_split"}); ns && ns->is_array())
    req.no_split = ns->get<std::vector<std::string>>();
  if (const json* dt = first_of(c, {"dtype", "torch_dtype"}); dt && dt->is_string()) {
    std::string name = dt->get<std::string>();
    if (name.rfind("torch.", 0) == 0) name = name.substr(6);
    auto parsed = dtype_from_name(name);
    REQUIRE_MESSAGE(parsed.has_value(), "unknown dtype " << name);
    req.dtype = *parsed;
  }
  if (const json* sd = first_of(c, {"special_dtypes"}); sd && sd->is_object())
    for (const auto& [k, v] : sd->items()) {
      std::string name = v.get<std::string>();
      if (name.rfind("torch.", 0) == 0) name = name.substr(6);
      auto parsed = dtype_from_name(name);
      REQUIRE_MESSAGE(parsed.has_value(), "unknown special dtype " << name);
      req.special_dtypes[k] = *parsed;
    }
  if (const json* ob = first_of(c, {"offload_buffers"}); ob && ob->is_boolean())
    req.offload_buffers = ob->get<bool>();

  const json* expected = first_of(c, {"expected_device_map", "expected", "result"});
  if (!expected) {
    const json* d = first_of(c, {"device_map"});
    if (d && d->is_object()) expected = d;
  }
  if (expected && expected->is_object() && expected->contains("device_map")) expected = &(*expected)["device_map"];
  REQUIRE_MESSAGE((expected && expected->is_object()), "the case has no expected device_map object");

  auto r = run_plan(req);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  std::map<std::string, std::string> want, got;
  for (const auto& [k, v] : expected->items()) want[k] = device_key(v);
  for (const auto& [k, d] : r->device_map) got[k] = d.key();
  CHECK(got == want);
  if (const json* per = first_of(c, {"bytes_per_device", "device_bytes"}); per && per->is_object())
    for (const auto& [k, v] : per->items()) {
      const std::string device = k;  // clang 14: a structured binding cannot be captured (CHECK_MESSAGE)
      double mine = 0;
      for (const auto& [dk, b] : r->bytes_per_device)
        if (dk == device_key(json(device))) mine = b;
      CHECK_MESSAGE(mine == v.get<double>(), "bytes on " << device);
    }
}

}  // namespace

TEST_CASE("planner parity with accelerate 0.30.1 (reference/planner)") {
  const auto ref = test::reference_dir();
  if (!ref || test::list_dir(*ref + "/planner").empty()) {
    test::skip_loudly("planner parity: no reference/planner/*.json in the reference data");
    return;
  }
  int cases = 0;
  for (const auto& entry : test::list_dir(*ref + "/planner")) {
    if (entry.size() < 6 || entry.substr(entry.size() - 5) != ".json") continue;
    const std::string stem = entry.substr(0, entry.size() - 5);
    const json file = json::parse(test::read_text(*ref + "/planner/" + entry));
    const json* list = first_of(file, {"cases", "plans"});
    if (list && list->is_array()) {
      for (std::size_t i = 0; i < list->size(); ++i, ++cases)
        check_case(*ref, file, (*list)[i], stem + "#" + std::to_string(i));
    } else {
      check_case(*ref, file, file, stem);
      ++cases;
    }
  }
  MESSAGE("planner parity: " << cases << " reference cases");
}
