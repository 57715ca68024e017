// native/torch/half_linear.h — y = x·wᵀ (+ b) straight from float16/bfloat16 weights, for the
// few rows a decoding step has, on a CPU.
//
// LibTorch 1.13 has no half-precision GEMM on a CPU worth using, so half weights are computed in
// float32. Casting a weight first reads 2 bytes and writes 4 per parameter, then the GEMV reads
// the 4 again: five times the bytes the stored weight has, where decoding is bound by exactly
// those bytes. This kernel widens each weight row in registers as it streams through it once.
#pragma once

#include <ATen/ATen.h>

namespace memfit::torchrt {

// Whether half_linear() takes this product: x float32 on a CPU with at most kHalfLinearRows rows
// (all dims but the last), w a contiguous 2-D float16/bfloat16 CPU tensor whose columns match.
constexpr std::int64_t kHalfLinearRows = 8;
bool half_linear_applies(const at::Tensor& x, const at::Tensor& w);

// x [..., K] float32, w [N, K] half, bias [N] (any floating dtype) or undefined → [..., N] float32.
at::Tensor half_linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias = {});

// Threads the kernel splits the output rows over (the compute threads; default: one per core).
void set_half_linear_threads(int threads);

// The instruction set the rows are computed with: the best this CPU has, chosen at start. Tests
// select each one the CPU has (a request above it gives the best); returns the one in use.
enum class HalfLinearKernel { kScalar, kAvx2, kAvx512 };
HalfLinearKernel use_half_linear_kernel(HalfLinearKernel kernel);

}  // namespace memfit::torchrt
