// native/torch/model_program.h — how an architecture runs: a list of stages (the embeddings, each
// no-split block of the tree, the head), the weights each stage reads, and the ATen math of one
// stage. The executor decides where weights come from; a family only computes.
//
// One file per family (gpt2.cpp, llama.cpp), registered in family_registry.cpp: the only place
// that switches on model_type, as in core's arch/ registry.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <ATen/ATen.h>

#include "memfit/config.h"
#include "memfit/tensor_tree.h"

namespace memfit::torchrt {

struct StageSpec {
  std::string name;                  // the module it runs ("transformer.h.3") or "embed"/"head"
  std::vector<std::string> weights;  // model tensor names it reads (tied aliases resolved)
};

// The weights of one stage, on the execution device, in the compute dtype.
class StageWeights {
 public:
  void set(const std::string& name, at::Tensor t) { map_[name] = std::move(t); }
  // Throws std::runtime_error naming the tensor when the stage asks for one it was not given.
  const at::Tensor& operator[](const std::string& name) const;
  std::size_t size() const { return map_.size(); }
  void clear() { map_.clear(); }

 private:
  std::unordered_map<std::string, at::Tensor> map_;
};

// What flows between stages. `past` tokens are already in the KV cache (0 without one).
struct ForwardState {
  at::Tensor input_ids;   // [B, T] int64 on the execution device
  at::Tensor hidden;      // [B, T, H]
  at::Tensor logits;      // [B, T, V] float32, set by the last stage
  std::int64_t past = 0;
  bool use_cache = false;
  std::vector<at::Tensor> keys, values;  // per layer: [B, kv_heads, past + T, head_dim]
};

class ModelProgram {
 public:
  virtual ~ModelProgram() = default;
  const std::vector<StageSpec>& stages() const { return stages_; }
  virtual void run(std::size_t stage, const StageWeights& w, ForwardState& s) const = 0;
  virtual std::int64_t layers() const = 0;

 protected:
  std::vector<StageSpec> stages_;
};

// The program for this config's model_type; throws cli::CliError(kExitUnsupported) listing the
// families that can run.
std::unique_ptr<ModelProgram> make_program(const std::string& model_type, const Config& config,
                                           const TensorTree& tree);

// Families' constructors (one file each).
std::unique_ptr<ModelProgram> make_gpt2(const Config& config, const TensorTree& tree);
std::unique_ptr<ModelProgram> make_llama(const Config& config, const TensorTree& tree);

}  // namespace memfit::torchrt
