#include <cmath>

#include "memfit/generate/sampling.h"

namespace memfit::generate {
namespace {

Result<float> checked_max(const std::vector<float>& logits) {
  if (logits.empty()) return Error(ErrorCode::kInvalidValue, "logits: the row is empty");
  float max = -INFINITY;
  for (const float x : logits) {
    if (std::isnan(x)) return Error(ErrorCode::kInvalidValue, "logits: the row holds a NaN");
    max = std::max(max, x);
  }
  return max;
}

}  // namespace

Result<std::int64_t> argmax(const std::vector<float>& logits) {
  const Result<float> max = checked_max(logits);
  if (!max) return max.error();
  for (std::size_t i = 0; i < logits.size(); ++i)
    if (logits[i] == *max) return static_cast<std::int64_t>(i);
  return Error(ErrorCode::kInternal, "argmax: no maximum");
}

Result<std::int64_t> sample(const std::vector<float>& logits, std::mt19937_64& rng) {
  const Result<float> max = checked_max(logits);
  if (!max) return max.error();
  if (std::isinf(*max) && *max < 0) return Error(ErrorCode::kInvalidValue, "logits: no token has a finite logit");
  std::vector<double> weights(logits.size());
  double total = 0;
  for (std::size_t i = 0; i < logits.size(); ++i)
    total += weights[i] = std::exp(static_cast<double>(logits[i]) - static_cast<double>(*max));
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1), 53 random bits
  const double target = u * total;
  double cumulative = 0;
  std::size_t last_positive = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] <= 0) continue;
    last_positive = i;
    cumulative += weights[i];
    if (cumulative > target) return static_cast<std::int64_t>(i);
  }
  return static_cast<std::int64_t>(last_positive);  // rounding left the target at the very end
}

Sampler::Sampler(const SamplingOptions& options) : options_(options), rng_(options.seed) {}

Result<std::int64_t> Sampler::next(std::vector<float> logits, const std::vector<std::int64_t>& seen) {
  process_logits(logits, options_, seen);
  return options_.greedy ? argmax(logits) : sample(logits, rng_);
}

}  // namespace memfit::generate
