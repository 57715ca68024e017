// native/torch/torch_types.h — memfit's DType ↔ ATen's ScalarType, and the CUDA switch.
//
// MEMFIT_TORCH_CUDA is defined by CMake when the LibTorch found has CUDA libraries (2.x builds on
// GPU machines); Debian's 1.13 is CPU-only. Code that needs CUDA headers is compiled only then;
// whether a GPU is actually present is asked at run time (torch::cuda::is_available()).
#pragma once

#include <ATen/ATen.h>
#include <torch/version.h>

#include "memfit/model/dtype.h"

#if TORCH_VERSION_MAJOR >= 2
#define MEMFIT_TORCH_2 1
#endif

namespace memfit::torchrt {

// Throws Failure (kUnsupported) for dtypes ATen has no type for (F8_E8M0, F4, …).
at::ScalarType to_scalar_type(DType dt, const std::string& tensor_name);
DType from_scalar_type(at::ScalarType st);

// A floating-point tensor in `dtype`; any other as it is (integer buffers keep their type). The
// one cast every placement applies, so resident, streamed and gathered weights get the same bits.
inline at::Tensor cast_floating(at::Tensor t, at::ScalarType dtype) {
  return at::isFloatingType(t.scalar_type()) && t.scalar_type() != dtype ? t.to(dtype) : t;
}

// True when this LibTorch was built with CUDA and a device is visible.
bool cuda_available();

}  // namespace memfit::torchrt
