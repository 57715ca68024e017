// Planner parity with the real accelerate 0.30.1 (../shared/reference/planner/*.json, schema in
// its README): every case — budget, strategy, dtype, special_dtypes, offload_buffers — must give
// accelerate's device map (keys and devices), its bytes per device, the budgets it parsed
// and, for auto/balanced/balanced_low_0, get_balanced_memory's budgets. 1.2.1 gave the same
// results on every case (each records "same_as_0.30.1"); a case where it did not would be
// compared with 1.2.1's fields too.
#include <doctest/doctest.h>

#include "support/parity.h"
#include "support/reference.h"

using namespace memfit::test;

namespace {

// Returns the number of fields compared.
std::size_t check_file(const std::string& ref, const std::string& entry, std::size_t* cases) {
  const OJson file = read_reference_json(ref + "/planner/" + entry);
  const OJson* config = member(file, "config");
  REQUIRE_MESSAGE((config && config->is_string()), entry << ": no \"config\" path");
  const std::string config_text = read_text(ref + "/" + config->get<std::string>());
  const OJson* list = member(file, "cases");
  REQUIRE_MESSAGE((list && list->is_array() && !list->empty()), entry << ": no \"cases\"");
  std::size_t fields = 0;
  for (const OJson& c : *list) {
    PlanCase p;
    p.label = entry + " " + c.value("case", "?") + " " + c.value("strategy", "?") +
              (member(c, "dtype") ? " " + c["dtype"].get<std::string>() : std::string()) +
              (c.value("offload_buffers", false) ? " offload_buffers" : "") +
              (member(c, "special_dtypes") ? " special_dtypes" : "");
    p.config_text = config_text;
    p.name = file.value("hub_id", "");
    p.strategy = c.value("strategy", "");
    p.max_memory = member(c, "max_memory_given");
    p.dtype = member(c, "dtype");
    p.no_split = member(c, "no_split_module_classes");
    p.special_dtypes = member(c, "special_dtypes");
    p.offload_buffers = c.value("offload_buffers", false);
    p.device_map = member(c, "device_map");
    p.bytes_per_device = member(c, "bytes_per_device");
    p.get_max_memory = member(c, "get_max_memory");
    p.balanced_max_memory = member(c, "balanced_max_memory");
    p.accelerate_error = member(c, "error");
    const std::size_t n = check_plan_case(p);
    CHECK_MESSAGE(n > 0, p.label << ": nothing compared");
    fields += n;
    ++*cases;
    if (const OJson* v121 = member(c, "accelerate_1.2.1"); v121 && !v121->value("same_as_0.30.1", false)) {
      PlanCase q = p;
      q.label += " (accelerate 1.2.1)";
      q.device_map = member(*v121, "device_map");
      q.bytes_per_device = member(*v121, "bytes_per_device");
      q.balanced_max_memory = member(*v121, "balanced_max_memory");
      fields += check_plan_case(q);
    }
  }
  return fields;
}

}  // namespace

TEST_CASE("planner parity with accelerate 0.30.1 (reference/planner)") {
  const auto ref = reference_dir();
  if (!ref || list_dir(*ref + "/planner").empty()) {
    skip_loudly("planner parity: no reference/planner/*.json");
    return;
  }
  std::size_t files = 0, cases = 0, fields = 0;
  for (const auto& entry : list_dir(*ref + "/planner")) {
    if (entry.size() < 6 || entry.substr(entry.size() - 5) != ".json") continue;
    ++files;
    fields += check_file(*ref, entry, &cases);
  }
  CHECK(files > 0);
  CHECK(cases > 0);
  MESSAGE("planner parity: " << files << " files, " << cases << " cases, " << fields << " fields compared");
}
