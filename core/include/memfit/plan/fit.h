// memfit/plan/fit.h — the `fit` strategy: a planner that budgets what really uses GPU memory.
//
// Accelerate budgets weights only, reserves the largest layer only on GPU 0 and the CPU,
// abandons a device for good when one module does not fit, and ignores the KV cache. `fit`:
//  - per GPU: budget − runtime overhead − activation workspace; the KV cache of the layers a GPU
//    holds is charged to that GPU; GPU 0 (where offloaded layers execute) reserves the largest
//    offloaded unit, and buffers of offloaded units stay on GPU 0 unless offload_buffers;
//  - units (no-split blocks, or leaves) are placed by dynamic programming over their order:
//    for each unit and GPU the placement keeping the most bytes on GPUs (ties: least used), so a
//    big embedding that does not fit is offloaded alone instead of abandoning the GPU;
//  - the units kept on GPUs are then re-split into contiguous ranges that balance the GPUs;
//  - it explains itself.
#pragma once

#include <string>
#include <map>
#include <vector>

#include "memfit/error.h"
#include "memfit/memory/largest_layer.h"
#include "memfit/memory/options.h"
#include "memfit/model/tensor_tree.h"
#include "memfit/plan/device.h"
#include "memfit/plan/device_map.h"
#include "memfit/plan/infer_device_map.h"

namespace memfit::plan {

struct FitOptions {
  AccelerateOptions sizes;          // dtype, special dtypes, no_split, offload_buffers, buffers era
  std::uint64_t overhead_bytes = static_cast<std::uint64_t>(kRunDefaults.overhead_bytes);
  std::uint64_t activation_bytes = 0;           // forward workspace at context × batch, per GPU
  // KV cache bytes (at context × batch) per unit name: usually one entry per decoder layer.
  std::map<std::string, std::uint64_t> kv_bytes;
  bool allow_disk = true;
};

struct DeviceUse {
  Device device;
  std::uint64_t budget = 0;        // the given budget
  std::uint64_t weights = 0;       // bytes of weights (and buffers) placed here
  std::uint64_t kv_cache = 0;      // KV cache of the layers held here (GPUs)
  std::uint64_t activations = 0;   // workspace (GPUs)
  std::uint64_t overhead = 0;      // runtime overhead (GPUs)
  std::uint64_t reserve = 0;       // GPU 0: staging room for the largest streamed unit
  std::vector<std::string> units;  // what it holds, in order
  std::uint64_t total() const { return weights + kv_cache + activations + overhead + reserve; }
};

struct FitPlan {
  DeviceMap device_map;
  std::vector<DeviceUse> devices;
  std::uint64_t streamed_bytes = 0;  // weights copied to the GPU per forward pass (CPU + disk)
  std::vector<std::string> explain;
};

// The ordered units the planner places: no-split modules and leaves, every tensor in exactly one.
std::vector<TreeItem> placement_units(const TensorTree& tree, const std::vector<std::string>& no_split);

Result<FitPlan> plan_fit(const TensorTree& tree, const MaxMemory& max_memory, const FitOptions& opt);

}  // namespace memfit::plan
