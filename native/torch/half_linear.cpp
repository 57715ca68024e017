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
__attribute__((target("avx2,fma,f16c"))) inline __m256 load8(const std::uint16_t* p, bool bf16) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return bf16 ? _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)) : _mm256_cvtph_ps(h);
}

__attribute__((target("avx2,fma"))) inline float sum8(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

// As rows_scalar, 8 weights per instruction. U independent accumulators per x row hide the FMA
// latency (one chain per row would run at a quarter of the load rate for a single row).
template <int M, int U>
__attribute__((target("avx2,fma,f16c"))) void rows_avx2(const float* x, std::int64_t K, const std::uint16_t* w,
                                                        bool bf16, std::int64_t N, std::int64_t n0, std::int64_t n1,
                                                        float* y) {
  const std::int64_t step = 8 * U, body = K / step * step;
  for (std::int64_t n = n0; n < n1; ++n) {
    const std::uint16_t* wr = w + n * K;
    __m256 acc[M][U];
    for (int m = 0; m < M; ++m)
      for (int u = 0; u < U; ++u) acc[m][u] = _mm256_setzero_ps();
    for (std::int64_t k = 0; k < body; k += step)
      for (int u = 0; u < U; ++u) {
        const __m256 wv = load8(wr + k + 8 * u, bf16);
        for (int m = 0; m < M; ++m) acc[m][u] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x + m * K + k + 8 * u), acc[m][u]);
      }
    for (int m = 0; m < M; ++m) {
      __m256 total = acc[m][0];
      for (int u = 1; u < U; ++u) total = _mm256_add_ps(total, acc[m][u]);
      float s = sum8(total);
      for (std::int64_t k = body; k < K; ++k) s += widen(wr[k], bf16) * x[m * K + k];
      y[m * N + n] = s;
    }
  }
}

__attribute__((target("avx512f"))) inline __m512 load16(const std::uint16_t* p, bool bf16) {
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return bf16 ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)) : _mm512_cvtph_ps(h);
}

// The same with 16 weights per instruction, where the CPU has AVX-512: half the instructions per
// byte, which is what a core's share of the memory bandwidth needs at one row.
template <int M, int U>
__attribute__((target("avx512f"))) void rows_avx512(const float* x, std::int64_t K, const std::uint16_t* w,
                                                    bool bf16, std::int64_t N, std::int64_t n0, std::int64_t n1,
                                                    float* y) {
  const std::int64_t step = 16 * U, body = K / step * step;
  for (std::int64_t n = n0; n < n1; ++n) {
    const std::uint16_t* wr = w + n * K;
    __m512 acc[M][U];
    for (int m = 0; m < M; ++m)
      for (int u = 0; u < U; ++u) acc[m][u] = _mm512_setzero_ps();
    for (std::int64_t k = 0; k < body; k += step)
      for (int u = 0; u < U; ++u) {
        const __m512 wv = load16(wr + k + 16 * u, bf16);
        for (int m = 0; m < M; ++m) acc[m][u] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(x + m * K + k + 16 * u), acc[m][u]);
      }
    for (int m = 0; m < M; ++m) {
      __m512 total = acc[m][0];
      for (int u = 1; u < U; ++u) total = _mm512_add_ps(total, acc[m][u]);
      float s = _mm512_reduce_add_ps(total);
      for (std::int64_t k = body; k < K; ++k) s += widen(wr[k], bf16) * x[m * K + k];
      y[m * N + n] = s;
    }
  }
}

using RowsFn = void (*)(const float*, std::int64_t, const std::uint16_t*, bool, std::int64_t, std::int64_t,
                        std::int64_t, float*);
constexpr RowsFn kAvx2[kHalfLinearRows] = {rows_avx2<1, 4>, rows_avx2<2, 4>, rows_avx2<3, 2>, rows_avx2<4, 2>,
                                           rows_avx2<5, 1>, rows_avx2<6, 1>, rows_avx2<7, 1>, rows_avx2<8, 1>};
constexpr RowsFn kAvx512[kHalfLinearRows] = {rows_avx512<1, 4>, rows_avx512<2, 4>, rows_avx512<3, 2>,
                                             rows_avx512<4, 2>, rows_avx512<5, 2>, rows_avx512<6, 2>,
                                             rows_avx512<7, 1>, rows_avx512<8, 1>};
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
