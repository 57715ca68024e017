// memfit/memory/gpu_fit.h — the inverse questions: what fits in this much memory, how many GPUs,
// how fast.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "memfit/memory/gpu_catalog.h"

namespace memfit {

// Total bytes for (context tokens, batch sequences); must not decrease in either argument.
using MemoryFunction = std::function<double(std::int64_t context, std::int64_t batch)>;

inline constexpr std::int64_t kMaxSolvedContext = std::int64_t{1} << 26;  // 67M tokens
inline constexpr std::int64_t kMaxSolvedBatch = std::int64_t{1} << 24;

// The largest x in [1, upper] with f(x) <= budget (0 when even 1 does not fit): exponential then
// binary search, so the answer x fits and x + 1 does not (unless x == upper).
std::int64_t largest_fitting(const std::function<double(std::int64_t)>& f, double budget,
                             std::int64_t upper);

struct Roofline {
  double decode_tokens_per_s = 0;   // all sequences together
  double prefill_tokens_per_s = 0;
};

struct FitReport {
  double vram_bytes = 0;     // per GPU
  double usable_bytes = 0;   // what the engine may use (vLLM: gpu_memory_utilization × vram)
  const GpuSpec* gpu = nullptr;
  std::int64_t context = 0, batch = 0;
  std::int64_t max_context = 0;  // at `batch`
  std::int64_t max_batch = 0;    // at `context`
  bool fits = false;             // at (context, batch)
  std::int64_t gpus_needed = 0;  // 0: no count of this GPU holds it (overhead alone exceeds it)
  std::optional<Roofline> roofline;
};

// `per_gpu_fixed`: the part every GPU carries in full (runtime overhead); the rest is split
// evenly across GPUs (tensor parallel) when counting how many are needed.
FitReport solve_fit(const MemoryFunction& total, double vram_bytes, double usable_bytes,
                    std::int64_t context, std::int64_t batch, double per_gpu_fixed);

// Memory-bound decode (the weights a step touches + the KV cache, read once per generated token)
// and compute-bound prefill (every weight), over `gpus` GPUs of this kind: an estimate, not a
// measurement. `decode_weights_bytes`: an MoE's dense weights plus the routed experts the batch's
// tokens go through (experts_touched), all of them for a dense model.
Roofline roofline(const GpuSpec& gpu, std::int64_t gpus, double weights_bytes, double decode_weights_bytes,
                  double kv_bytes, double active_parameters, std::int64_t context, std::int64_t batch,
                  double attention_flops_per_token_squared);

}  // namespace memfit
