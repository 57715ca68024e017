// native/torch/model_program.h — how an architecture runs: a list of stages (the embeddings, each
// no-split block of the tree, the head), the weights each stage reads, and the ATen math of one
// stage. The executor decides where weights come from; a family only computes.
//
// One file per family (gpt2.cpp, llama.cpp, mistral.cpp, …; the RoPE decoders share decoder.h), registered in family_registry.cpp: the only place
// that switches on model_type, as in core's arch/ registry.
#pragma once

#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <ATen/ATen.h>

#include "memfit/model/model.h"
#include "memfit/model/tensor_tree.h"

namespace memfit::torchrt {

struct StageSpec {
  std::string name;                  // the module it runs ("transformer.h.3") or "embed"/"head"
  std::vector<std::string> weights;  // model tensor names it reads (tied aliases resolved)
  // Of `weights`, those the stage reads only as rows for the input ids (StageWeights::embedding):
  // placed on disk, just those rows are read — not a whole vocabulary per token generated.
  std::vector<std::string> gathered = {};
};

// The weights of one stage, on the execution device, in the compute dtype — or, for half
// weights a CPU computes in float32, as stored, cast only where a product needs it (linear()).
class StageWeights {
 public:
  void set(const std::string& name, at::Tensor t) { map_[name] = std::move(t); }
  // A weight kept in its stored half dtype; operator[] gives it cast to `compute` (once).
  void set_uncast(const std::string& name, at::Tensor t, at::ScalarType compute) {
    uncast_[name] = compute;
    map_[name] = std::move(t);
  }
  // The weight in the compute dtype. Throws std::runtime_error naming the tensor when the stage
  // asks for one it was not given.
  const at::Tensor& operator[](const std::string& name) const;
  // x·wᵀ (+ bias), as at::linear on operator[] — except that a few rows (a decoding step) against
  // an uncast half weight read it once, as stored (half_linear.h).
  at::Tensor linear(const at::Tensor& x, const std::string& weight, const std::string& bias = "") const;
  // at::embedding(weight `name`, ids) for the forward's input ids. When the executor read only
  // the rows of those ids (set_gathered: the rows, and each id's row among them), the values
  // come from them — the very same bits.
  at::Tensor embedding(const std::string& name, const at::Tensor& ids) const;
  void set_gathered(const std::string& name, at::Tensor rows, at::Tensor row_of_id);
  std::size_t size() const { return map_.size(); }
  void clear() {
    map_.clear();
    gathered_.clear();
    uncast_.clear();
    cast_.clear();
  }

 private:
  std::unordered_map<std::string, at::Tensor> map_;
  std::unordered_map<std::string, at::ScalarType> uncast_;   // names set_uncast() kept as stored
  mutable std::unordered_map<std::string, at::Tensor> cast_;  // their casts, made on first use
  std::unordered_map<std::string, std::pair<at::Tensor, at::Tensor>> gathered_;
};

// What flows between stages. `past` tokens are already in the KV cache (0 without one).
struct ForwardState {
  at::Tensor input_ids;   // [B, T] int64 on the execution device
  at::Tensor hidden;      // [B, T, H]
  at::Tensor logits;      // [B, T, V] float32, set by the last stage
  std::int64_t past = 0;
  bool use_cache = false;
  // Positions the cache is allocated for (prompt + new tokens); 0: the first forward's length.
  // A forward past it grows the cache (one copy, doubling), so a caller that knows the context
  // length pays no copy at all. A sliding layer never holds more than its window.
  std::int64_t capacity = 0;
  // The dtype keys/values are stored in (Undefined: their own). The executor sets the model's
  // dtype, as transformers keeps its cache: a CPU computing half weights in float32 stores
  // them half, and attention reads them back in float32 — what the planner counts.
  at::ScalarType cache_dtype = at::ScalarType::Undefined;
  // Per layer: [B, kv_heads, slots, head_dim] on the device the layer's attention ran on (its
  // execution device), in cache_dtype. A full layer's slots are its capacity, position p in slot
  // p; a sliding layer's min(window, capacity), position p in slot p % slots (kv_cache.cpp).
  std::vector<at::Tensor> keys, values;

  // Attention's keys/values for `layer` (window: its sliding window in tokens, 0 for full
  // attention): with a cache, this forward's k/v [B, kv, T, d] are stored and the keys/values
  // attention reads come back in k's dtype — the positions a causal mask over queries at
  // S−T … S−1 expects, S−T before the new ones (S: what comes back), except for one new token
  // in a sliding layer past its window, whose W positions come back in slot order (all of them
  // in its window). Without a cache, k and v themselves. Every family calls this (kv_cache.cpp).
  std::pair<at::Tensor, at::Tensor> cached_kv(std::int64_t layer, const at::Tensor& k, const at::Tensor& v,
                                              std::int64_t window = 0);
};

// A 0-d tensor of torch.finfo(scores.dtype).min, what transformers' causal masks fill with
// (float32's lowest overflows a float16/bfloat16 score).
inline at::Tensor masked_value(const at::Tensor& scores) {
  const at::Scalar lowest = AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, scores.scalar_type(), "lowest",
                                                            [] { return at::Scalar(std::numeric_limits<scalar_t>::lowest()); });
  return at::full({}, lowest, scores.options());
}

class ModelProgram {
 public:
  virtual ~ModelProgram() = default;
  const std::vector<StageSpec>& stages() const { return stages_; }
  virtual void run(std::size_t stage, const StageWeights& w, ForwardState& s) const = 0;
  // Called once per forward before its first stage runs (input_ids and past set): what every
  // block needs of the positions (RoPE tables) is computed here, not in the embedding stage, so
  // that a pipeline stage without the embedding (generate --nodes) has it too.
  virtual void prepare(ForwardState& /*s*/) const {}
  virtual std::int64_t layers() const = 0;
  // Positions a forward may reach at most: a learned position table's rows (GPT-2's wpe). 0 when
  // positions are computed (RoPE), which run past max_position_embeddings as transformers lets them.
  std::int64_t position_limit() const { return position_limit_; }

 protected:
  std::vector<StageSpec> stages_;
  std::int64_t position_limit_ = 0;
};

// The program for this config's model_type; throws Failure(kUnsupported) listing the
// families that can run.
std::unique_ptr<ModelProgram> make_program(const std::string& model_type, const Model& model,
                                           const TensorTree& tree);

// The dimensions a program is built from: the Model's, read by its family with the tree. Throws
// the error they were read with, or Failure(kInvalidInput) when there are none.
const ModelDims& program_dims(const Model& model);

// Families' constructors (one file each).
std::unique_ptr<ModelProgram> make_gpt2(const Model& model, const TensorTree& tree);
std::unique_ptr<ModelProgram> make_llama(const Model& model, const TensorTree& tree);
std::unique_ptr<ModelProgram> make_mistral(const Model& model, const TensorTree& tree);
std::unique_ptr<ModelProgram> make_qwen2(const Model& model, const TensorTree& tree);
std::unique_ptr<ModelProgram> make_qwen3(const Model& model, const TensorTree& tree);
std::unique_ptr<ModelProgram> make_qwen3_moe(const Model& model, const TensorTree& tree);
std::unique_ptr<ModelProgram> make_mixtral(const Model& model, const TensorTree& tree);
std::unique_ptr<ModelProgram> make_gemma(const Model& model, const TensorTree& tree);
std::unique_ptr<ModelProgram> make_gemma2(const Model& model, const TensorTree& tree);
std::unique_ptr<ModelProgram> make_gemma3(const Model& model, const TensorTree& tree);
std::unique_ptr<ModelProgram> make_phi3(const Model& model, const TensorTree& tree);

}  // namespace memfit::torchrt
