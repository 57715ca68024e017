// memfit/memory/kv_cache.h — the KV cache of a generative model, layer by layer, from its
// dimensions, as each inference engine allocates it.
//
// The layout (which layers attend fully, which through a sliding window, how many key/value
// heads and of what width, MLA's compressed cache, encoder-decoder cross-attention) is the
// model's per-layer dims (memfit/model/model_dims.h), read with its tree; which layers slide
// follows transformers' own order of precedence there (docs/memory-model.md):
//   layer_types → sliding_window_pattern (or cache_implementation "hybrid", pattern 2) →
//   use_sliding_window: false → use_sliding_window + max_window_layers → sliding_window (all).
// The engine then decides how many tokens a layer holds (transformers caps windowed layers at
// the window, vLLM at window − 1 + max_num_batched_tokens in blocks of 16, llama.cpp at
// window + n_ubatch padded to 256) and in what format (MLA: vLLM and llama.cpp cache the latent,
// transformers the decompressed per-head K and V).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/memory/options.h"
#include "memfit/model/config.h"
#include "memfit/model/model.h"
#include "memfit/model/model_dims.h"

namespace memfit {

// Bytes one cached element takes under an engine: llama.cpp stores int8 as q8_0 (34 bytes per
// 32 values: 32 int8 + one fp16 scale).
double kv_element_bytes(KvDtype dtype, Engine engine);

// One decoder layer as the cache sees it. Head widths are per layer: Gemma 4's global layers
// cache wider heads than its sliding ones.
struct AttentionLayer {
  AttentionKind kind = AttentionKind::kFull;
  bool sliding = false;     // the layer holds a window of tokens: sliding or chunked attention
  std::int64_t window = 0;  // sliding: tokens in the window; chunked: the chunk
  std::int64_t kv_heads = 0;
  std::int64_t k_head_dim = 0, v_head_dim = 0;
  // The conv + SSM state per sequence, whatever the context (recurrent layers; Falcon-H1's
  // attention layers carry one beside their KV cache).
  RecurrentDims state;
  std::int64_t index_head_dim = 0;  // MLA with DeepSeek-V3.2's indexer: its own key per token
};

struct AttentionLayout {
  std::vector<AttentionLayer> layers;  // decoder self-attention layers, in order (each with its head widths)
  // MLA (DeepSeek-V2/V3): the latent a token leaves in each layer, kv_lora_rank + qk_rope_head_dim.
  bool mla = false;
  std::int64_t mla_latent = 0;
  // Encoder-decoder: one cross-attention per decoder layer over the encoder's output.
  std::int64_t cross_layers = 0, cross_kv_heads = 0, cross_head_dim = 0;
  std::int64_t default_encoder_length = 0;  // max_source_positions (Whisper: 1500), else 0
  std::string window_rule;  // the config key that decided which layers are windowed ("" = none)

  int count(AttentionKind kind) const;
  // Windowed layers (sliding or chunked) and layers that cache every token (full or MLA).
  int sliding_layers() const;
  int full_layers() const { return count(AttentionKind::kFull) + count(AttentionKind::kMla); }
};

// The KV cache's view of the model's per-layer dims. Throws the error the per-layer attention
// was read with (Error(kMissingKey / kInvalidValue) naming the key).
AttentionLayout attention_layout(const ModelDims& dims);
// The model's dims; Error(kInvalidArgument) when it has none (not a transformers config).
AttentionLayout attention_layout(const Model& model);

struct KvOptions {
  Engine engine = kRunDefaults.engine;
  KvDtype dtype = KvDtype::kBF16;
  std::int64_t context = 0;         // tokens per sequence
  std::int64_t batch = kRunDefaults.batch;          // sequences
  std::int64_t encoder_length = 0;  // encoder-decoder: encoder tokens (0: the layout's default, else context)
  // Engine parameters, at the engines' defaults (docs/memory-model.md).
  std::int64_t vllm_block_size = 16;
  std::int64_t vllm_max_num_batched_tokens = 2048;  // `vllm serve` on GPUs under 70 GiB
  std::int64_t llamacpp_ubatch = 512;
  std::int64_t llamacpp_pad = 256;
  // Recurrent state (linear attention, SSM) is not a KV cache and is not quantized with it:
  // transformers and vLLM keep it in the model's dtype, llama.cpp in F32 (llama-memory-recurrent).
  double state_element_bytes = 2;
};

struct KvCache {
  double bytes_per_token = 0;  // one sequence, all layers, K and V, before any window cap
  double self_bytes = 0;       // the decoder's own cache, all sequences
  double cross_bytes = 0;      // encoder-decoder cross-attention cache, all sequences
  double state_bytes = 0;      // recurrent layers' state, all sequences (constant in the context)
  std::int64_t encoder_length = 0;
  // Per decoder layer, all sequences: its cached tokens or its state (what `fit` places with it).
  std::vector<double> layer_bytes;
  double total() const { return self_bytes + cross_bytes + state_bytes; }
};

KvCache kv_cache(const AttentionLayout& layout, const KvOptions& options);

}  // namespace memfit
