// memfit/model/checkpoint_tree.h — the tensor tree a checkpoint actually holds, and how it compares
// with the tree a config implies (no I/O: headers come in already parsed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memfit/format/safetensors.h"
#include "memfit/model/config.h"
#include "memfit/model/dtype.h"
#include "memfit/model/tensor_tree.h"

namespace memfit {

struct CheckpointTensor {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
  std::string file;  // the shard (or single file) holding it
};

// Every tensor of parsed headers, tagged with their file names.
std::vector<CheckpointTensor> checkpoint_tensors(const std::vector<std::pair<std::string, safetensors::Header>>& files);

// The class name memfit gives repeated numbered blocks (`model.layers.7`, `h.7`,
// `encoder.layer.7`, …) of a checkpoint whose architecture is unknown: they are no-split units.
inline constexpr const char* kRepeatedBlockClass = "RepeatedBlock";

// A tree from checkpoint names alone: modules from the dotted prefixes (in natural order, so
// `layers.10` follows `layers.9`), every tensor a parameter at its stored dtype, and each child of
// a numbered container a no-split RepeatedBlock.
TensorTree tree_from_checkpoint(const std::vector<CheckpointTensor>& tensors);

// Copies module class names and no-split classes from a config tree onto a checkpoint tree
// wherever the module names agree, so no-split semantics follow the real architecture.
void adopt_classes(TensorTree& checkpoint_tree, const TensorTree& config_tree);

struct ShapeMismatch {
  std::string name;
  Shape expected, got;
};
struct DtypeDifference {
  std::string name;
  DType expected, got;
};
struct TreeComparison {
  std::vector<std::string> missing;     // in the model's state dict, not in the checkpoint
  std::vector<std::string> unexpected;  // in the checkpoint, not in the model
  std::vector<ShapeMismatch> shape_mismatches;
  std::vector<DtypeDifference> dtype_differences;  // informative: loading casts
  std::string prefix_note;  // e.g. "checkpoint names carry the prefix 'model.'"
  // The same as data, for a loader mapping checkpoint names to model names:
  // model name = add_prefix + (checkpoint name without strip_prefix). At most one is non-empty.
  std::string add_prefix, strip_prefix;
  bool matches() const { return missing.empty() && unexpected.empty() && shape_mismatches.empty(); }
};

// Compares the state dict a config tree implies (parameters without tied aliases, persistent
// buffers) with what a checkpoint holds. A base-model prefix present on one side only
// ("model.", "transformer.", …) is recognised, as transformers does when loading.
// `expected_dtype`: the dtype the checkpoint is expected to store floats in (config torch_dtype).
TreeComparison compare_trees(const TensorTree& config_tree,
                             const std::vector<CheckpointTensor>& checkpoint,
                             std::optional<DType> expected_dtype);

// One tensor a state dict is expected to hold (its dtype as stored).
struct ExpectedTensor {
  std::string name;
  Shape shape;
  DType dtype = DType::kF32;
};
// compare_trees over a list of expected tensors; `aliases` are names a checkpoint may store
// besides (tied copies). `check_shapes` false: names only (an index without its shards' headers).
TreeComparison compare_state_dict(const std::vector<ExpectedTensor>& expected,
                                  const std::vector<std::string>& aliases,
                                  const std::vector<CheckpointTensor>& checkpoint,
                                  std::optional<DType> expected_dtype, bool check_shapes = true);

// Parameters a checkpoint represents: packed GPTQ/AWQ int32 weights (`*.qweight`) unpacked with
// quantization_config.bits, bitsandbytes 4-bit weights ×2, and quantization constants (scales,
// zeros, g_idx, absmax, quant_map, quant_state) not counted.
std::uint64_t checkpoint_parameter_count(const std::vector<CheckpointTensor>& tensors,
                                         const Config* config);

}  // namespace memfit
