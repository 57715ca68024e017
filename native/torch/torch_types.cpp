#include "torch_types.h"

#include <torch/cuda.h>

#include <fmt/format.h>

#include "failure.h"

namespace memfit::torchrt {

at::ScalarType to_scalar_type(DType dt, const std::string& tensor_name) {
  switch (dt) {
    case DType::kBool: return at::kBool;
    case DType::kU8: return at::kByte;
    case DType::kI8: return at::kChar;
    case DType::kI16: return at::kShort;
    case DType::kI32: return at::kInt;
    case DType::kI64: return at::kLong;
    case DType::kF16: return at::kHalf;
    case DType::kBF16: return at::kBFloat16;
    case DType::kF32: return at::kFloat;
    case DType::kF64: return at::kDouble;
    case DType::kC64: return at::kComplexFloat;
    default: break;
  }
  throw Failure{FailureKind::kUnsupported,
                      fmt::format("tensor '{}': dtype {} has no LibTorch {}.{} type", tensor_name,
                                  safetensors_name(dt), TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR)};
}

DType from_scalar_type(at::ScalarType st) {
  switch (st) {
    case at::kBool: return DType::kBool;
    case at::kByte: return DType::kU8;
    case at::kChar: return DType::kI8;
    case at::kShort: return DType::kI16;
    case at::kInt: return DType::kI32;
    case at::kLong: return DType::kI64;
    case at::kHalf: return DType::kF16;
    case at::kBFloat16: return DType::kBF16;
    case at::kDouble: return DType::kF64;
    case at::kComplexFloat: return DType::kC64;
    default: return DType::kF32;
  }
}

bool cuda_available() { return torch::cuda::is_available(); }

}  // namespace memfit::torchrt
