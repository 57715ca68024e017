// memfit/memory/stored_form.h — the tensors a model's checkpoint stores, from its config alone.
//
// A Hub repo saved by transformers holds its state dict: every parameter and persistent buffer
// (tied aliases once), floats at the config's dtype, and each weight a quantizer converted in the
// form that quantizer registers (memfit/memory/quantization.h's quantized_layout: FP8's
// `weight_scale_inv`, MXFP4's `_blocks` / `_scales`, GPTQ / AWQ's `qweight` / `scales` /
// `qzeros` / `g_idx`). The bytes are the ones weight_bytes() counts in memory for a quantized
// layer — one rule serves the estimate and the checkpoint.
//
// It lives in memory/, not model/: which weights a scheme converts and how many bytes they
// take are memory/'s linear_layers and quantization rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memfit/model/config.h"
#include "memfit/model/dtype.h"
#include "memfit/model/model.h"
#include "memfit/model/quant_config.h"
#include "memfit/model/tensor_tree.h"

namespace memfit {

struct StoredTensor {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
  std::uint64_t bytes = 0;
  int tensor = -1;  // the tree tensor it stores; a quantized weight's pieces share its index
};

// The dtype config.json declares: its `torch_dtype` or `dtype`, else its text_config's (Qwen3.5
// keeps it only there); nullopt when neither names one. `how` says where it was found.
std::optional<DType> declared_dtype(const Config& config, std::string* how);

// The float dtype of a checkpoint: config.json's `torch_dtype` (or `dtype`, transformers ≥ 4.56;
// else the text_config's), else the quantizer's default when from_pretrained is given none
// (MXFP4: bfloat16, Mxfp4HfQuantizer.update_dtype), else float32 (transformers' default).
// `how` says which of these it was.
DType stored_float_dtype(const Config& config, const std::optional<QuantScheme>& scheme, std::string* how);

// The state dict of `tree` as stored (current transformers' tree: for_era(tree, false) first):
// tied aliases and non-persistent buffers left out, floats at `dtype`, quantized weights as
// their pieces. `vocab` (0: unknown) tells the output head, which quantizers leave alone.
std::vector<StoredTensor> stored_form(const TensorTree& tree, DType dtype,
                                      const std::optional<QuantScheme>& scheme, std::int64_t vocab);

struct ModelStoredForm {
  std::vector<StoredTensor> tensors;
  DType dtype = DType::kF32;
  std::string dtype_source;  // how stored_float_dtype chose it
  std::uint64_t total_bytes = 0;
};
// A model's stored form (its current-era tree, its config's dtype and quantization_config).
// Throws the model's deferred quantization error.
ModelStoredForm stored_form(const Model& model);

// The stored tensors of a DeepSeek-V3-style model's multi-token-prediction layers
// (`num_nextn_predict_layers`), which transformers does not build but Hub checkpoints hold at
// `model.layers.{num_hidden_layers + i}`: a decoder layer like the last one (the family's tree
// with more layers), plus embed_tokens, enorm, hnorm, eh_proj and shared_head.{norm, head} as
// vLLM's deepseek_mtp.py registers them (VocabParallelEmbedding, RMSNorm, nn.Linear,
// ParallelLMHead: only eh_proj is a Linear a quantizer converts). Empty when the config has none,
// or when the family cannot build the longer model.
std::vector<StoredTensor> mtp_stored_form(const Model& model);

// Checkpoint names transformers ignores on load (`_keys_to_ignore_on_load_unexpected`), so that a
// checkpoint holding them still loads: the rotary `inv_freq` buffers older transformers saved
// (`….rotary_emb.inv_freq`, Llama and its descendants), multi-token-prediction weights
// (`model.layers.{num_hidden_layers + i}.*` for DeepSeek-V3-style `num_nextn_predict_layers`:
// DeepseekV3Model, Glm4MoeModel; `mtp.*`: Qwen3NextPreTrainedModel, Qwen3.5). Only names the
// stored form lacks are tested, so the rules are read from config keys, not from model_type.
class IgnoredOnLoad {
 public:
  explicit IgnoredOnLoad(const Config& config);
  bool matches(const std::string& name) const;
  // The MTP layers' indexes: [first, first + count).
  std::int64_t first_mtp_layer() const { return first_mtp_layer_; }
  std::int64_t mtp_layers() const { return mtp_layers_; }

 private:
  std::int64_t first_mtp_layer_ = -1, mtp_layers_ = 0;
};

}  // namespace memfit
