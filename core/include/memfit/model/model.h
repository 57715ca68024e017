// memfit/model/model.h — one model, described once.
//
// build_model() reads config.json (and, on memfit's exact path, the checkpoint's headers) once,
// into one value: the parsed Config, the library, model_type and class, the tensor tree, the
// model's dimensions (per layer: attention kind, heads, RoPE, MoE) and its quantization.
// Everything after it — estimate, will-it-run, the planner, the JSON API, the loader, the
// LibTorch programs — takes the Model and never reads the config's architecture keys again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memfit/error.h"
#include "memfit/model/checkpoint_tree.h"
#include "memfit/model/config.h"
#include "memfit/model/estimate_request.h"
#include "memfit/model/model_dims.h"
#include "memfit/model/quant_config.h"
#include "memfit/model/tensor_tree.h"

namespace memfit {

struct Model {
  EstimateRequest request;  // what was asked: name, library, mode, class, dtypes, checkpoint
  Config config{Json::object(), "config.json"};  // parsed once; empty when there was none
  bool has_config = false;
  std::string library, model_type;
  // The tree of the selected class with the buffers of every transformers era (consumers narrow
  // it with for_era() for their mode), or, on the exact path, the checkpoint's own tree at its
  // stored dtypes with the config's class names adopted. Compact (repeated experts described
  // once) only when build_model was asked for TreeForm::kCompact.
  TensorTree tree;
  bool from_checkpoint = false;
  // memfit's exact path over a model_type no family knows: the weights are the checkpoint's
  // (exact), the dimensions the generic reader's guesses from the config's usual keys.
  bool unknown_family = false;
  std::optional<TreeComparison> comparison;  // config vs checkpoint, when both are known
  std::uint64_t parameters = 0;  // unique parameters as the report counts them
  // The dimensions, filled by the family from the reads that built its tree (the generic reader
  // for families that do not, and on the exact path when the config's family could not build).
  // Known for transformers configs only; an error when the config lacks a key they need.
  Deferred<ModelDims> dims;
  // config.json's quantization_config (none: no value); an unknown quant_method is an error.
  Deferred<QuantScheme> quantization;
  std::vector<std::string> notes;

  const std::string& class_name() const { return tree.class_name(); }
};

// How the tree is wanted. Named: every tensor under its state-dict name, as the planner, the
// loader and validation need. Compact: identical consecutive decoder layers and routed experts
// described once with a count (ModuleNode::repeat, compact()), for callers that only sum sizes —
// estimating a 1T-parameter MoE then walks a few hundred tensors, not a hundred thousand.
enum class TreeForm { kNamed, kCompact };

// Parses, picks the family and class, builds the tree. Errors name the file and key.
Result<Model> build_model(EstimateRequest request, TreeForm form = TreeForm::kNamed);

// build_model(request)'s tree alone, for callers that need nothing else of the model.
inline Result<TensorTree> build_tree(EstimateRequest request) {
  Result<Model> m = build_model(std::move(request));
  if (!m) return m.error();
  return std::move(std::move(m).value().tree);
}

// The same config (not parsed again) built for another mode's class: `plan --compat accelerate
// --device-map fit` budgets the KV cache of the class that generates, not of AutoModel's.
Result<Model> rebuild_for_mode(const Model& model, Mode mode);

}  // namespace memfit
