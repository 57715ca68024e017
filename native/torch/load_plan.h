// native/torch/load_plan.h — everything decided before a single weight is allocated (no LibTorch):
// the empty model (core's tensor tree for config.json), the checkpoint checked against it by name
// (missing / unexpected / shape / dtype), and where each tensor goes (a device map: a planner
// strategy, a JSON file written by `memfit plan --output`, or inline JSON), checked with
// check_device_map.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint.h"
#include "memfit/model/checkpoint_tree.h"
#include "memfit/model/config.h"
#include "memfit/model/model.h"
#include "memfit/model/tensor_tree.h"
#include "memfit/plan/device_map.h"

namespace memfit::torchrt {

// What the machine has, as the LibTorch side sees it (passed in so this file stays torch-free).
struct DeviceInventory {
  std::vector<std::uint64_t> gpu_free_bytes;  // one per CUDA device; empty without CUDA
  std::uint64_t cpu_available_bytes = 0;      // MemAvailable
};

struct LoadPlan;

// A pipeline stage's share of the model (generate --nodes, pipeline_stage.h): the tensors this
// process holds and, for a planner strategy, its device map (the stage's modules only). The
// executor runs program stages [first_stage, end_stage).
struct StageSelection {
  std::vector<std::string> tensors;
  std::optional<plan::DeviceMap> device_map;  // none: the request's map (JSON or the default)
  std::string device_map_origin;
  std::size_t first_stage = 0, end_stage = 0;
};
// Chooses the stage once the model and the checkpoint are known and checked, before any weight is
// mapped (so a rank whose checkpoint or plan differs is refused before it loads).
using StagePicker = std::function<StageSelection(const LoadPlan&)>;

struct LoadRequest {
  std::string checkpoint;      // DIR, a .safetensors / .bin file, or an index
  std::string config;          // config.json or its folder; "" = the checkpoint's folder
  // "" (everything on the execution device), auto|balanced|balanced_low_0|sequential|fit,
  // a JSON file, or inline JSON ('{"": "disk"}').
  std::string device_map;
  std::string max_memory;      // "0=8GiB,cpu=16GiB"; "" = what the inventory says is free
  std::optional<DType> dtype;  // weights in memory; default: the checkpoint's (stored_dtype)
  bool allow_missing = false;
  bool ignore_unexpected = false;
  StagePicker stage;           // set: load one pipeline stage's tensors only
};

// One checkpoint tensor the model uses, and where it goes.
struct PlacedWeight {
  std::size_t record = 0;      // index into source.tensors
  std::string model_name;      // the tree's name (prefix differences resolved)
  plan::Device device;
};

struct LoadPlan {
  Model model;                 // config.json, parsed once, and the class from_pretrained builds
  std::string model_type;
  TensorTree tree;             // the empty model (current transformers' buffers)
  checkpoint::Checkpoint source;
  TreeComparison comparison;
  plan::DeviceMap device_map;
  std::string device_map_origin;  // "default", "auto", "file map.json", "inline"
  std::vector<PlacedWeight> weights;  // state-dict tensors, checkpoint file order
  std::vector<std::string> skipped;   // checkpoint tensors not loaded (tied copies, unexpected)
  DType dtype = DType::kF32;
  std::optional<StageSelection> stage;  // a pipeline stage: only its tensors are in `weights`
  bool any_gpu() const;
};

// Reads the config, validates, plans. Throws Failure: kMismatch for a checkpoint that does not
// match the model (listing names), kUsage for a bad map, kFile for I/O.
LoadPlan make_load_plan(const LoadRequest& req, const DeviceInventory& inventory);

// Tensor names of the tree under `module` ("" = all), parameters and persistent buffers, tied
// aliases resolved to the tensor they alias; what a block needs at run time.
std::vector<std::string> tensors_under(const TensorTree& tree, const std::string& module);
// The name a (possibly tied) tensor is stored under: lm_head.weight → transformer.wte.weight.
std::string resolve_alias(const TensorTree& tree, const std::string& name);

}  // namespace memfit::torchrt
