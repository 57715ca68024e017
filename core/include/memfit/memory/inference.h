// memfit/memory/inference.h — memory to *run* a model: weights + KV cache + activations + runtime
// overhead, each its own part (formulas and sources in docs/memory-model.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memfit/memory/kv_cache.h"
#include "memfit/memory/options.h"
#include "memfit/model/model_dims.h"

namespace memfit {

struct MemoryPart {
  std::string name;
  double bytes = 0;
};

struct ActivationOptions {
  Engine engine = kRunDefaults.engine;
  AttentionImpl attention = kRunDefaults.attention;
  double element_bytes = 2;        // the compute dtype
  std::int64_t context = 1, batch = 1;
  std::int64_t encoder_length = 0;  // encoder-decoder: the encoder's tokens (0: context)
  std::int64_t vllm_max_num_batched_tokens = 2048;
  std::int64_t vllm_max_num_seqs = 256;
  std::int64_t llamacpp_ubatch = 512;
};

struct Activations {
  std::int64_t tokens_per_step = 0;  // tokens one forward pass computes
  std::vector<MemoryPart> parts;     // hidden states, attention, MLP intermediate, logits
  double bytes = 0;                  // hidden + max(attention, MLP) + logits
};

// The transient memory of the largest forward step the engine takes (transformers: the whole
// prompt batch at once; vLLM: its profile run of max_num_batched_tokens; llama.cpp: one ubatch).
Activations inference_activations(const ModelDims& dims, const ActivationOptions& options);

struct InferenceEstimate {
  Engine engine = kRunDefaults.engine;
  std::string dtype;       // weights' compute dtype
  std::string kv_dtype;
  std::string attention;   // "sdpa" / "eager"
  std::int64_t context = 0, batch = 0;
  KvCache kv;
  double weights_bytes = 0;
  Activations activations;
  double overhead_bytes = 0;
  double total_bytes() const { return weights_bytes + kv.total() + activations.bytes + overhead_bytes; }
};

}  // namespace memfit
