// memfit/plan/plan.h — one planning request, whatever the strategy, shared by the CLI and the
// JSON API: build the tree, plan, account bytes per device, and render JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "memfit/memory/estimate.h"
#include "memfit/memory/options.h"
#include "memfit/plan/device.h"
#include "memfit/plan/device_map.h"
#include "memfit/plan/fit.h"
#include "memfit/plan/strategy.h"

namespace memfit::plan {

struct PlanRequest {
  EstimateRequest model;   // for run_plan(request) only: the model to build (the mode picks the class)
  MaxMemory max_memory;
  Strategy strategy = Strategy::kAuto;
  std::optional<DType> dtype;
  std::optional<std::vector<std::string>> no_split;
  std::map<std::string, DType> special_dtypes;
  bool offload_buffers = false;
  bool no_disk = false;
  std::uint64_t context = kRunDefaults.context, batch = kRunDefaults.batch;
  std::uint64_t overhead_bytes = static_cast<std::uint64_t>(kRunDefaults.overhead_bytes);
  // KV bytes per unit and activation bytes for `fit` (computed by the caller from the config).
  std::map<std::string, std::uint64_t> kv_bytes;
  std::uint64_t activation_bytes = 0;
};

struct PlanResult {
  Strategy strategy = Strategy::kAuto;
  std::string model_class;
  DeviceMap device_map;
  MaxMemory max_memory;  // budgets used (after balancing for auto/balanced/balanced_low_0)
  std::vector<std::pair<std::string, double>> bytes_per_device;  // device key → bytes
  double streamed_bytes = 0;
  std::vector<std::string> explain;
  std::optional<FitPlan> fit;
};

Result<PlanResult> run_plan(const Model& model, const PlanRequest& req);
// build_model(req.model) then run_plan().
Result<PlanResult> run_plan(const PlanRequest& req);
// The planning step alone, on a tree already narrowed to its era (`compat`: accelerate's), with
// the request's kv_bytes / activation_bytes as given: the pipeline planner plans each node's
// share of the model with it.
Result<PlanResult> plan_tree(const TensorTree& tree, const PlanRequest& req, bool compat);
nlohmann::ordered_json plan_to_json(const PlanResult& r);
// {"model.embed_tokens": 0, "lm_head": "cpu"} — the form accelerate and the loader accept.
nlohmann::ordered_json device_map_to_json(const DeviceMap& map);
Result<DeviceMap> device_map_from_json(const std::string& text, const std::string& source);

}  // namespace memfit::plan
