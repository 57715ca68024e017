// core/plan/runtime_parts.h — what a run adds to the weights, per placement unit: the KV cache of
// each decoder layer (with the no-split block that holds it) and the activation workspace. `fit`
// and the pipeline planner budget both with it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "memfit/model/model.h"
#include "memfit/plan/infer_device_map.h"
#include "memfit/plan/plan.h"

namespace memfit::plan {

// Fills `kv` (unit name → bytes) and `activations`; when the model's run cannot be estimated or
// its layers do not line up with the no-split blocks, leaves them and says why in `notes`.
// `compute_dtype`: the dtype the run computes in (torch's name), when it could be estimated.
void runtime_parts(const Model& model, const PlanRequest& req, const TensorTree& tree,
                   std::map<std::string, std::uint64_t>* kv, std::uint64_t* activations,
                   std::vector<std::string>* notes, std::string* compute_dtype = nullptr);

// The sizes the request asks for, as the accelerate-style planners take them (`compat`: the
// accelerate era's buffers).
AccelerateOptions accelerate_options(const PlanRequest& req, bool compat);

}  // namespace memfit::plan
