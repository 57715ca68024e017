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

// A tensor of the tree that a scheme stores quantized: a Linear's 2-D weight, or (MXFP4) a 3-D
// expert parameter [experts, in, out] of an `…Experts` module (gpt-oss's GptOssExperts, which
// transformers' integrations/mxfp4.py replaces with Mxfp4GptOssExperts).
struct QuantizedTensor {
  int tensor = -1;               // index into tree.tensors
  std::int64_t in = 0, out = 0;  // per expert for a 3-D parameter
  std::int64_t experts = 0;      // 0: a 2-D Linear weight
};
// The tensors a scheme quantizes (modules_to_not_convert honoured): the Linear weights in module
// order, then MXFP4's expert parameters.
std::vector<QuantizedTensor> quantized_tensors(const TensorTree& tree, std::int64_t vocab,
                                               const QuantScheme& s);

// Bytes of a tensor of this shape and dtype as stored (sub-byte dtypes packed).
std::uint64_t stored_bytes(const Shape& shape, DType dtype);

// One stored tensor of a quantized weight. Plain data (no strings, no heap): the estimate sizes
// every quantized layer through it, and the WASM bundle pays for each allocation site.
struct QuantPiece {
  const char* leaf = "";  // replaces the tensor's last name component (`qweight`), unless…
  bool suffix = false;    // …true: appended to the tensor's name ("" : the tensor itself)
  DType dtype = DType::kU8;
  std::int64_t dims[5] = {};
  int rank = 0;
  Shape shape() const { return Shape(dims, dims + rank); }
  std::uint64_t bytes() const;
  std::string name(const std::string& tensor) const;  // its full checkpoint name
};
struct QuantLayout {
  QuantPiece pieces[4];
  int count = 0;  // 0: no listed layout (sized by formula)
  const QuantPiece* begin() const { return pieces; }
  const QuantPiece* end() const { return pieces + count; }
};
// How the checkpoint stores a quantized tensor (`<module>.weight`, or an expert parameter
// `<module>.gate_up_proj`), as the quantizer's module registers it:
//   GPTQ   <module>.qweight, .qzeros, .scales, .g_idx     AWQ  <module>.qweight, .qzeros, .scales
//   fp8    <name> F8_E4M3 + <name>_scale_inv F32          bnb 8-bit  <name> I8 + <module>.SCB
//   MXFP4  <name>_blocks U8 [E, out, in/32, 16] + <name>_scales U8 [E, out, in/32]
// Empty for bnb 4-bit (its packed quant_state blob has no size the config tells) and GGUF (not a
// safetensors layout): those are sized by formula only.
QuantLayout quantized_layout(const QuantizedTensor& q, const QuantScheme& s);
// Bytes of a quantized tensor and its constants: the pieces' bytes where they are known.
double quantized_tensor_bytes(const QuantizedTensor& q, const QuantScheme& s);

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
