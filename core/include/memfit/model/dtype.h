// memfit/model/dtype.h — tensor element types, their sizes in bits and their names.
//
// Sizes are kept in *bits* so that sub-byte types (bool counted at 1/8 byte by accelerate,
// int4, F4/F6) stay exact integers everywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace memfit {

enum class DType : std::uint8_t {
  kBool, kU8, kI8, kF8_E5M2, kF8_E4M3, kF8_E8M0, kF8_E4M3FNUZ, kF8_E5M2FNUZ,
  kI16, kU16, kF16, kBF16, kI32, kU32, kF32, kC64, kF64, kI64, kU64,
  kF4, kF6_E2M3, kF6_E3M2,
  kInt4,  // a packed 4-bit integer (memfit's "int4" row); not a safetensors dtype
};

// Bits per element. Bool is 8 here (its storage); accelerate's 1/8-byte rule is applied by
// accounting_bits().
int dtype_bits(DType dt);
// Bits per element as accelerate's dtype_byte_size() counts them (bool → 1 bit).
int accounting_bits(DType dt);
bool is_floating(DType dt);

// "F32", "BF16", … as in safetensors headers.
std::string_view safetensors_name(DType dt);
std::optional<DType> dtype_from_safetensors(std::string_view name);
// "float32", "bfloat16", "int64", "bool", … as torch prints them (without "torch.").
std::string_view torch_name(DType dt);
// Accepts torch names and the usual aliases ("fp16", "half", "bf16", "float", "int4").
std::optional<DType> dtype_from_name(std::string_view name);

}  // namespace memfit
