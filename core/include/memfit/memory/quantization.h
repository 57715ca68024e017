// memfit/memory/quantization.h — weight bytes of a quantized model when only its config is known.
//
// Each scheme is sized as its library lays the tensors out (docs/memory-model.md has the
// sources): per quantized Linear [out, in] —
//   GPTQ   qweight int32 [in·bits/32, out], qzeros int32 [in/g, out·bits/32],
//          scales fp16 [in/g, out], g_idx int32 [in]                          (AutoGPTQ)
//   AWQ    qweight int32 [in, out·bits/32], qzeros int32 [in/g, out·bits/32],
//          scales fp16 [in/g, out]                                            (AutoAWQ, GEMM)
//   bnb 4-bit  packed uint8 [(n+1)/2], absmax fp32 per 64-element block, quant_map 16 fp32;
//          double quant: absmax as uint8 + fp32 absmax per 256 blocks + 256-entry code + offset
//   bnb 8-bit  int8 [out, in] + SCB fp32 [out]                                (LLM.int8)
//   fp8    e4m3 [out, in] + weight_scale_inv fp32 per block (weight_block_size) or per tensor
//   MXFP4  4-bit blocks + one E8M0 scale byte per 32 values                  (gpt-oss)
//   GGUF q8_0 / q4_0  blocks of 32 values with one fp16 scale: 34 / 18 bytes (ggml-common.h
//          block_q8_0, block_q4_0); llama.cpp quantizes every matrix, embeddings and output too
// Quantized: Linear / Conv1D layers except the output head and modules_to_not_convert (GPTQ
// and AWQ: only inside the repeated blocks). Everything else stays at the compute dtype.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memfit/memory/linear_layers.h"
#include "memfit/memory/options.h"
#include "memfit/model/config.h"
#include "memfit/model/dtype.h"
#include "memfit/model/quant_config.h"
#include "memfit/model/tensor_tree.h"

namespace memfit {

// The scheme of a `dtype` option's quantization: int8 (bitsandbytes LLM.int8), int4 / nf4
// (bitsandbytes NF4), fp4, fp8, q8_0, q4_0 (GGUF); with `gguf`, int8 / int4 mean q8_0 / q4_0
// (llama.cpp).
QuantScheme quant_scheme_for(WeightQuant quant, bool gguf = false);
// QLoRA's base model: NF4 with double quantization (Dettmers et al. 2023).
QuantScheme qlora_scheme();

bool is_quantized_by(const LinearLayer& layer, const std::string& module_name, const QuantScheme& s);
// Bytes of one quantized layer's weight and its quantization constants (the bias is not included).
double quantized_layer_bytes(const LinearLayer& layer, const QuantScheme& s);

struct WeightBytes {
  double bytes = 0;            // everything the model holds in memory
  double quantized_bytes = 0;  // of which quantized layers (weights + constants)
  int quantized_layers = 0;
};

// Weights (parameters and current-era buffers) with floats at `compute`, quantized layers per
// the scheme (none when `scheme` is empty).
WeightBytes weight_bytes(const TensorTree& tree, std::int64_t vocab, DType compute,
                         const std::optional<QuantScheme>& scheme);

}  // namespace memfit
