#include "half_linear.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>

#include <c10/util/Half.h>

namespace memfit::torchrt {
namespace {

int g_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

float widen(std::uint16_t v, bool bf16) {
  if (!bf16) return static_cast<float>(c10::Half(v, c10::Half::from_bits()));
  const std::uint32_t bits = static_cast<std::uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Output rows [n0, n1) of y [M, N] from x [M, K] and w [N, K], one weight element at a time.
void rows_scalar(const float* x, int m_rows, std::int64_t K, const std::uint16_t* w, bool bf16, std::int64_t N,
                 std::int64_t n0, std::int64_t n1, float* y) {
  for (std::int64_t n = n0; n < n1; ++n) {
    const std::uint16_t* wr = w + n * K;
    for (int m = 0; m < m_rows; ++m) {
      float acc = 0;
      for (std::int64_t k = 0; k < K; ++k) acc += widen(wr[k], bf16) * x[m * K + k];
      y[m * N + n] = acc;
    }
  }
}

#if defined(__x86_64__)
using RowsFn = void (*)(const float*, std::int64_t, const std::uint16_t*, bool, std::int64_t, std::int64_t,
                        std::int64_t, float*);
}  // namespace

// The loop once per instruction set (half_linear_rows-inl.h), each copy compiled for its own.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#endif
namespace avx2 {
namespace {
struct Vec {  // 8 floats; weights widened from 8 halves (F16C) or shifted from 8 bfloat16
  using Reg = __m256;
  static constexpr int kWidth = 8;
  static Reg zero() { return _mm256_setzero_ps(); }
  static Reg load(const float* p) { return _mm256_loadu_ps(p); }
  static Reg widen(const std::uint16_t* p, bool bf16) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return bf16 ? _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)) : _mm256_cvtph_ps(h);
  }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
  static float sum(Reg v) {
    const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
  }
};
#include "half_linear_rows-inl.h"
}  // namespace
}  // namespace avx2
#if defined(__clang__)
#pragma clang attribute pop
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#else
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f")
#endif
namespace avx512 {
namespace {
// 16 weights per instruction: half the instructions per byte, which is what a core's share of
// the memory bandwidth needs at one row.
struct Vec {
  using Reg = __m512;
  static constexpr int kWidth = 16;
  static Reg zero() { return _mm512_setzero_ps(); }
  static Reg load(const float* p) { return _mm512_loadu_ps(p); }
  static Reg widen(const std::uint16_t* p, bool bf16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return bf16 ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)) : _mm512_cvtph_ps(h);
  }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static float sum(Reg v) { return _mm512_reduce_add_ps(v); }
};
#include "half_linear_rows-inl.h"
}  // namespace
}  // namespace avx512
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

namespace {
// Accumulators per x row (U) by rows (M): as many as the registers hold (16 ymm, 32 zmm).
constexpr RowsFn kAvx2[kHalfLinearRows] = {avx2::rows<1, 4>, avx2::rows<2, 4>, avx2::rows<3, 2>, avx2::rows<4, 2>,
                                           avx2::rows<5, 1>, avx2::rows<6, 1>, avx2::rows<7, 1>, avx2::rows<8, 1>};
constexpr RowsFn kAvx512[kHalfLinearRows] = {avx512::rows<1, 4>, avx512::rows<2, 4>, avx512::rows<3, 2>,
                                             avx512::rows<4, 2>, avx512::rows<5, 2>, avx512::rows<6, 2>,
                                             avx512::rows<7, 1>, avx512::rows<8, 1>};
#endif

HalfLinearKernel best_kernel() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) return HalfLinearKernel::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c"))
    return HalfLinearKernel::kAvx2;
#endif
  return HalfLinearKernel::kScalar;
}

const HalfLinearKernel kBest = best_kernel();
HalfLinearKernel g_kernel = kBest;

}  // namespace

void set_half_linear_threads(int threads) { g_threads = std::max(1, threads); }

HalfLinearKernel use_half_linear_kernel(HalfLinearKernel kernel) {
  g_kernel = std::min(kernel, kBest);
  return g_kernel;
}

bool half_linear_applies(const at::Tensor& x, const at::Tensor& w) {
  const auto wt = w.scalar_type();
  if ((wt != at::kHalf && wt != at::kBFloat16) || !w.is_cpu() || w.dim() != 2 || !w.is_contiguous()) return false;
  if (!x.is_cpu() || x.scalar_type() != at::kFloat || x.dim() < 1 || x.size(-1) != w.size(1)) return false;
  return x.numel() / x.size(-1) <= kHalfLinearRows;
}

at::Tensor half_linear(const at::Tensor& x_in, const at::Tensor& w, const at::Tensor& bias) {
  const at::Tensor x = x_in.contiguous();
  const std::int64_t K = w.size(1), N = w.size(0);
  const int M = static_cast<int>(x.numel() / K);
  auto sizes = x.sizes().vec();
  sizes.back() = N;
  at::Tensor y = at::empty({M, N}, x.options());
  const float* xp = x.data_ptr<float>();
  const auto* wp = static_cast<const std::uint16_t*>(w.data_ptr());
  const bool bf16 = w.scalar_type() == at::kBFloat16;
  float* yp = y.data_ptr<float>();
  // Blocks of output rows, split statically: each thread streams one contiguous part of w.
  constexpr std::int64_t kBlock = 64;
  const std::int64_t blocks = (N + kBlock - 1) / kBlock;
  const int threads = static_cast<int>(std::min<std::int64_t>(g_threads, blocks));
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t n0 = b * kBlock, n1 = std::min(N, n0 + kBlock);
#if defined(__x86_64__)
    if (g_kernel != HalfLinearKernel::kScalar) {
      (g_kernel == HalfLinearKernel::kAvx512 ? kAvx512 : kAvx2)[M - 1](xp, K, wp, bf16, N, n0, n1, yp);
      continue;
    }
#endif
    rows_scalar(xp, M, K, wp, bf16, N, n0, n1, yp);
  }
  if (bias.defined()) y.add_(bias.to(at::kFloat));
  return y.view(sizes);
}

}  // namespace memfit::torchrt
