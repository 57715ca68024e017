// memfit/memory/llamacpp_offload.h — where llama.cpp puts a GGUF model's bytes for a given
// --gpu-layers, --ctx-size and --cache-type-k/v, and the largest --gpu-layers that fits a GPU.
//
// Placement (llama.cpp src/llama-model.cpp, load_tensors): the model has n_layer + 1 "layer
// slots", the last one the output layer (output_norm, output); slot il goes to the GPU when
// il >= n_layer + 1 − n_gpu_layers. So --gpu-layers 1 offloads the output layer alone, k the
// output layer and the last k − 1 blocks, n_layer + 1 (or more) everything. The input layer
// (token_embd) always stays on the CPU; with tied embeddings the output layer creates
// token_embd again (TENSOR_DUPLICATED): a second copy where the output layer is on the GPU.
// KV cache (src/llama-kv-cache.cpp, llama-kv-cache-iswa.cpp): each layer's K and V sit on its
// layer's device (offload_kqv, the default). Cells per layer are memfit's kv_cache() for
// Engine::kLlamaCpp: n_ctx padded to 256; a sliding layer holds min(n_ctx, n_swa + n_ubatch)
// padded to 256. Bytes per element are the cache type's ggml block bytes ÷ block size (f16: 2,
// q8_0: 34/32, q4_0: 18/32). MLA caches its latent in K and nothing in V; recurrent layers keep
// their conv + SSM state in f32.
// Compute buffer: llama.cpp sizes it by reserving the worst-case graph (llama_context's
// graph_reserve), which metadata alone cannot reproduce. memfit approximates it (see
// compute_buffer_bytes) and says so in every report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memfit/format/ggml_types.h"
#include "memfit/model/gguf_model.h"

namespace memfit {

struct LlamaCppOptions {
  std::int64_t gpu_layers = -1;       // --gpu-layers / -ngl; −1: all (n_layer + 1)
  std::int64_t ctx_size = 4096;       // --ctx-size / -c; 0: the model's context_length
  std::uint32_t cache_type_k = 1;     // ggml type ids; f16 by default
  std::uint32_t cache_type_v = 1;
  std::int64_t ubatch = 512;          // --ubatch-size
  std::int64_t parallel = 1;          // --parallel: sequences
  bool flash_attn = true;             // --flash-attn (llama.cpp's default "auto" turns it on where the backend has it)
  double overhead_bytes = 0;          // added to the GPU (CUDA context, workspaces)
};

// The ggml types llama.cpp accepts for --cache-type-k/v (common/arg.cpp kv_cache_types).
bool is_cache_type(std::uint32_t type);
std::string cache_type_list();  // "f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1"

struct LlamaCppLayer {
  int layer = 0;
  bool gpu = false;
  std::uint64_t weight_bytes = 0;
  double k_bytes = 0, v_bytes = 0, state_bytes = 0;
  std::int64_t cells = 0;  // KV cells this layer holds per sequence (0: recurrent / none)
  bool sliding = false;
  double total() const { return static_cast<double>(weight_bytes) + k_bytes + v_bytes + state_bytes; }
};

struct DeviceBytes {
  double weights = 0, kv = 0, compute = 0, overhead = 0;
  double total() const { return weights + kv + compute + overhead; }
};

struct LlamaCppEstimate {
  std::int64_t gpu_layers = 0;     // the effective value, 0..n_layer + 1
  std::int64_t n_ctx = 0;          // after llama.cpp's padding
  std::vector<LlamaCppLayer> layers;
  std::uint64_t input_bytes = 0;   // token_embd and the other tensors outside blocks and output (CPU)
  std::uint64_t output_bytes = 0;  // output_norm + output (+ token_embd's copy when tied and on the GPU)
  bool output_gpu = false;
  DeviceBytes gpu, cpu;
  double kv_k_bytes = 0, kv_v_bytes = 0, state_bytes = 0;
  std::string compute_note;        // the compute buffer's formula, said once
  std::vector<std::string> notes;
};

LlamaCppEstimate llamacpp_estimate(const GgufModel& model, const LlamaCppOptions& options);
// The compute buffer memfit assumes per device holding layers: one ubatch's activations
// (n_ubatch × (4·n_embd + 2·n_ff) floats), the logits (n_ubatch × n_vocab floats) where the
// output layer is, and without flash attention the KQ scores (n_head × n_ctx × n_ubatch floats).
double compute_buffer_bytes(const GgufModel& model, const LlamaCppOptions& o, std::int64_t n_ctx, bool has_output);

// The largest --gpu-layers in [0, n_layer + 1] whose GPU total fits `vram`; nullopt when not
// even 0 does (the compute buffer and overhead alone exceed it).
std::optional<std::int64_t> largest_gpu_layers(const GgufModel& model, LlamaCppOptions options, double vram);

}  // namespace memfit
