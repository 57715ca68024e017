#include "memfit/model/dtype.h"

#include <array>
#include <string>

namespace memfit {
namespace {

struct DTypeRow {
  DType dtype;
  int bits;
  bool floating;
  std::string_view st_name;     // safetensors
  std::string_view torch_name;  // torch
};

// One row per dtype: the single source for sizes and names.
constexpr std::array<DTypeRow, 23> kRows{{
    {DType::kBool, 8, false, "BOOL", "bool"},
    {DType::kU8, 8, false, "U8", "uint8"},
    {DType::kI8, 8, false, "I8", "int8"},
    {DType::kF8_E5M2, 8, true, "F8_E5M2", "float8_e5m2"},
    {DType::kF8_E4M3, 8, true, "F8_E4M3", "float8_e4m3fn"},
    {DType::kF8_E8M0, 8, true, "F8_E8M0", "float8_e8m0fnu"},
    {DType::kF8_E4M3FNUZ, 8, true, "F8_E4M3FNUZ", "float8_e4m3fnuz"},
    {DType::kF8_E5M2FNUZ, 8, true, "F8_E5M2FNUZ", "float8_e5m2fnuz"},
    {DType::kI16, 16, false, "I16", "int16"},
    {DType::kU16, 16, false, "U16", "uint16"},
    {DType::kF16, 16, true, "F16", "float16"},
    {DType::kBF16, 16, true, "BF16", "bfloat16"},
    {DType::kI32, 32, false, "I32", "int32"},
    {DType::kU32, 32, false, "U32", "uint32"},
    {DType::kF32, 32, true, "F32", "float32"},
    {DType::kC64, 64, true, "C64", "complex64"},
    {DType::kF64, 64, true, "F64", "float64"},
    {DType::kI64, 64, false, "I64", "int64"},
    {DType::kU64, 64, false, "U64", "uint64"},
    {DType::kF4, 4, true, "F4", "float4_e2m1fn_x2"},
    {DType::kF6_E2M3, 6, true, "F6_E2M3", "float6_e2m3"},
    {DType::kF6_E3M2, 6, true, "F6_E3M2", "float6_e3m2"},
    {DType::kInt4, 4, false, "", "int4"},
}};

const DTypeRow& row(DType dt) {
  for (const auto& r : kRows)
    if (r.dtype == dt) return r;
  return kRows[14];  // unreachable: every enumerator has a row
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

}  // namespace

int dtype_bits(DType dt) { return row(dt).bits; }
int accounting_bits(DType dt) { return dt == DType::kBool ? 1 : row(dt).bits; }
bool is_floating(DType dt) { return row(dt).floating; }
std::string_view safetensors_name(DType dt) { return row(dt).st_name; }
std::string_view torch_name(DType dt) { return row(dt).torch_name; }

std::optional<DType> dtype_from_safetensors(std::string_view name) {
  for (const auto& r : kRows)
    if (!r.st_name.empty() && r.st_name == name) return r.dtype;
  return std::nullopt;
}

std::optional<DType> dtype_from_name(std::string_view name) {
  std::string n = lower(name);
  if (n.rfind("torch.", 0) == 0) n = n.substr(6);
  if (n == "fp32" || n == "float") return DType::kF32;
  if (n == "fp16" || n == "half") return DType::kF16;
  if (n == "bf16") return DType::kBF16;
  if (n == "fp64" || n == "double") return DType::kF64;
  if (n == "fp8" || n == "float8") return DType::kF8_E4M3;
  if (n == "long") return DType::kI64;
  for (const auto& r : kRows)
    if (r.torch_name == n) return r.dtype;
  if (auto st = dtype_from_safetensors(std::string(name))) return st;
  return std::nullopt;
}

}  // namespace memfit
