// memfit/plan/infer_device_map.h — accelerate's get_balanced_memory + infer_auto_device_map,
// reproduced exactly (0.30.1 semantics, quirks included), on memfit's tensor tree.
#pragma once

#include <optional>
#include <string>
#include <map>
#include <vector>

#include "memfit/error.h"
#include "memfit/memory/module_sizes.h"
#include "memfit/model/dtype.h"
#include "memfit/model/tensor_tree.h"
#include "memfit/plan/device.h"
#include "memfit/plan/device_map.h"
#include "memfit/plan/strategy.h"

namespace memfit::plan {

struct AccelerateOptions {
  std::optional<std::vector<std::string>> no_split;  // default: the model's _no_split_modules
  std::optional<DType> dtype;                        // weights converted to it when loaded
  std::map<std::string, DType> special_dtypes;
  bool offload_buffers = false;
  bool clean_result = true;
  bool include_legacy_buffers = true;  // size buffers as transformers 4.40 allocates them
};

// Sizes as accelerate's compute_module_sizes(model, dtype, special_dtypes) sees them.
ModuleSizes planner_sizes(const TensorTree& tree, const AccelerateOptions& opt);

// get_balanced_memory: budgets for `auto`/`balanced` (low_zero=false) and `balanced_low_0`.
MaxMemory get_balanced_memory(const TensorTree& tree, const MaxMemory& max_memory,
                              const AccelerateOptions& opt, bool low_zero);

struct AcceleratePlan {
  DeviceMap device_map;
  MaxMemory max_memory;  // the budgets used (after balancing)
};

// infer_auto_device_map with the given budgets (disk is appended, unlimited).
DeviceMap infer_auto_device_map(const TensorTree& tree, const MaxMemory& max_memory,
                                const AccelerateOptions& opt);

// The whole of transformers' device_map="auto"|"balanced"|"balanced_low_0"|"sequential".
Result<AcceleratePlan> plan_accelerate(const TensorTree& tree, const MaxMemory& max_memory,
                                       Strategy strategy, const AccelerateOptions& opt);

}  // namespace memfit::plan
