#include "memfit/memory/gpu_fit.h"

#include <algorithm>
#include <cmath>

namespace memfit {

std::int64_t largest_fitting(const std::function<double(std::int64_t)>& f, double budget,
                             std::int64_t upper) {
  if (upper < 1 || f(1) > budget) return 0;
  std::int64_t lo = 1, hi = 2;  // f(lo) fits; find hi that does not (or the upper bound)
  while (hi <= upper && f(hi) <= budget) {
    lo = hi;
    if (hi > upper / 2) {
      hi = upper + 1;
      break;
    }
    hi *= 2;
  }
  if (hi > upper) {
    if (f(upper) <= budget) return upper;
    hi = upper;
  }
  while (hi - lo > 1) {  // invariant: f(lo) fits, f(hi) does not
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (f(mid) <= budget) lo = mid;
    else hi = mid;
  }
  return lo;
}

FitReport solve_fit(const MemoryFunction& total, double vram_bytes, double usable_bytes,
                    std::int64_t context, std::int64_t batch, double per_gpu_fixed) {
  FitReport r;
  r.vram_bytes = vram_bytes;
  r.usable_bytes = usable_bytes;
  r.context = context;
  r.batch = batch;
  const double need = total(context, batch);
  r.fits = need <= usable_bytes;
  r.max_context = largest_fitting([&](std::int64_t c) { return total(c, batch); }, usable_bytes,
                                  kMaxSolvedContext);
  r.max_batch = largest_fitting([&](std::int64_t b) { return total(context, b); }, usable_bytes,
                                kMaxSolvedBatch);
  const double room = usable_bytes - per_gpu_fixed;
  if (room > 0) {
    const double shared = std::max(0.0, need - per_gpu_fixed);
    r.gpus_needed = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(shared / room)));
  }
  return r;
}

Roofline roofline(const GpuSpec& gpu, std::int64_t gpus, double weights_bytes, double decode_weights_bytes,
                  double kv_bytes, double active_parameters, std::int64_t context, std::int64_t batch,
                  double attention_flops_per_token_squared) {
  const double n = static_cast<double>(std::max<std::int64_t>(1, gpus));
  const double bw = gpu.bandwidth_bytes_s * n, peak = gpu.bf16_flops * n;
  const double B = static_cast<double>(batch), C = static_cast<double>(context);
  Roofline r;
  // Decode: one token per sequence; the weights it touches and every cached K/V read once.
  const double decode_time = std::max((decode_weights_bytes + kv_bytes) / bw,
                                      2.0 * active_parameters * B / peak);
  r.decode_tokens_per_s = B / decode_time;
  // Prefill: 2 FLOPs per parameter per token, plus causal attention (half of C² per sequence).
  const double flops = 2.0 * active_parameters * B * C + attention_flops_per_token_squared * B * C * C / 2.0;
  const double prefill_time = std::max(weights_bytes / bw, flops / peak);
  r.prefill_tokens_per_s = B * C / prefill_time;
  return r;
}

}  // namespace memfit
