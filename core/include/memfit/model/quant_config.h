// memfit/model/quant_config.h — a checkpoint's quantization as its config.json declares it
// (`quantization_config`), read once with the model (Model::quantization). What the scheme costs
// in bytes is memfit/memory/quantization.h's business.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memfit/model/config.h"
#include "memfit/model/dtype.h"

namespace memfit {

enum class QuantMethod : std::uint8_t { kGptq, kAwq, kBnb4, kBnb8, kFp8, kMxfp4, kGgufQ8_0, kGgufQ4_0 };

struct QuantScheme {
  QuantMethod method = QuantMethod::kBnb4;
  int bits = 4;
  std::int64_t group_size = 128;    // GPTQ/AWQ; -1: one group per input row
  bool double_quant = false;        // bnb 4-bit: bnb_4bit_use_double_quant
  std::int64_t bnb_blocksize = 64;
  std::vector<std::int64_t> fp8_block;  // weight_block_size [out, in]; empty: per-tensor scale
  std::vector<std::string> skip_modules;  // modules_to_not_convert / llm_int8_skip_modules
  std::optional<DType> compute_dtype;     // bnb_4bit_compute_dtype, when given
  std::string describe() const;           // "gptq 4-bit, group 128"
};

// The scheme of config.json's `quantization_config`; nullopt when there is none. An unknown
// quant_method throws Error(kInvalidValue) listing the known ones.
std::optional<QuantScheme> quant_scheme_from_config(const Config& config);

}  // namespace memfit
