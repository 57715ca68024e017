// native/torch/half_linear_rows-inl.h — the loop of half_linear(), written once for every vector
// instruction set. half_linear.cpp includes it once per set, inside a namespace whose `Vec`
// names that set's registers and operations, under a target pragma for it (as Highway's
// foreach_target does): the same loop compiled for AVX2 and for AVX-512. No include guard.
//
// Output rows [n0, n1) of y [M, N] from x [M, K] and w [N, K], Vec::kWidth weights per
// instruction. U independent accumulators per x row hide the FMA latency (one chain per row
// would run at a quarter of the load rate for a single row).
template <int M, int U>
void rows(const float* x, std::int64_t K, const std::uint16_t* w, bool bf16, std::int64_t N, std::int64_t n0,
          std::int64_t n1, float* y) {
  constexpr std::int64_t kWidth = Vec::kWidth, kStep = kWidth * U;
  const std::int64_t body = K / kStep * kStep;
  for (std::int64_t n = n0; n < n1; ++n) {
    const std::uint16_t* wr = w + n * K;
    typename Vec::Reg acc[M][U];
    for (int m = 0; m < M; ++m)
      for (int u = 0; u < U; ++u) acc[m][u] = Vec::zero();
    for (std::int64_t k = 0; k < body; k += kStep)
      for (int u = 0; u < U; ++u) {
        const typename Vec::Reg wv = Vec::widen(wr + k + kWidth * u, bf16);
        for (int m = 0; m < M; ++m) acc[m][u] = Vec::fma(wv, Vec::load(x + m * K + k + kWidth * u), acc[m][u]);
      }
    for (int m = 0; m < M; ++m) {
      typename Vec::Reg total = acc[m][0];
      for (int u = 1; u < U; ++u) total = Vec::add(total, acc[m][u]);
      float s = Vec::sum(total);
      for (std::int64_t k = body; k < K; ++k) s += widen(wr[k], bf16) * x[m * K + k];
      y[m * N + n] = s;
    }
  }
}
