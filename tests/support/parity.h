// tests/support/parity.h — reading ../shared/reference's accelerate outputs, and comparing one
// device-map run with memfit's planner. Both parity suites (estimate-memory files and planner
// files) describe their device-map runs in the same terms, so one checker serves both.
//
// Every check counts the fields it compared: a case that compared nothing fails.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace memfit::test {

using OJson = nlohmann::ordered_json;

// The member `key` of `j` when it exists and is not null, else nullptr.
const OJson* member(const OJson& j, const char* key);
// A reference file, parsed with its key order kept (device maps are compared in order).
OJson read_reference_json(const std::string& path);

struct PlanCase {
  std::string label;        // for messages
  std::string config_text;
  std::string name;
  std::string strategy = "sequential";  // infer_auto_device_map alone; auto/balanced/... balance first
  const OJson* max_memory = nullptr;    // as passed to accelerate: {"0": 1000, "cpu": "2GiB"}
  const OJson* key_types = nullptr;     // "max_memory_given_key_types", when recorded
  const OJson* dtype = nullptr;         // "float16" | null
  const OJson* no_split = nullptr;      // list | null (null: accelerate's default of [])
  const OJson* special_dtypes = nullptr;
  bool offload_buffers = false;
  const OJson* device_map = nullptr;    // the expected result
  const OJson* bytes_per_device = nullptr;
  const OJson* get_max_memory = nullptr;       // the budgets accelerate parsed, when recorded
  const OJson* balanced_max_memory = nullptr;  // get_balanced_memory's result, when recorded
  // accelerate raised instead of planning (e.g. a "disk" budget under auto: get_balanced_memory
  // calls torch.device("disk")). memfit plans such budgets: the map must then be valid.
  const OJson* accelerate_error = nullptr;
};

// Runs memfit's planner in accelerate mode on the case and CHECKs every expected field.
// Returns the number of fields compared.
std::size_t check_plan_case(const PlanCase& c);

}  // namespace memfit::test
