// transformers' logits processors and warpers (src/transformers/generation/logits_process.py,
// RepetitionPenaltyLogitsProcessor, TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper)
// on one row of float logits. The options are doubles (Python floats) and are applied as float,
// as torch applies a Python scalar to a float32 tensor.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "memfit/generate/sampling.h"

namespace memfit::generate {
namespace {

constexpr float kFiltered = -std::numeric_limits<float>::infinity();  // the warpers' filter_value

Error invalid(const std::string& option, const std::string& rule, double got) {
  return Error(ErrorCode::kInvalidValue, option + " must be " + rule + ", got " + std::to_string(got));
}

}  // namespace

Result<SamplingOptions> validated(SamplingOptions o) {
  if (!(o.temperature > 0) || !std::isfinite(o.temperature))
    return invalid("temperature", "a strictly positive number (for greedy decoding ask for greedy, not temperature 0)",
                   o.temperature);
  if (o.top_k < 0) return invalid("top_k", "a non-negative integer (0: off)", static_cast<double>(o.top_k));
  if (!(o.top_p >= 0 && o.top_p <= 1)) return invalid("top_p", "in [0, 1] (1: off)", o.top_p);
  if (!(o.repetition_penalty > 0) || !std::isfinite(o.repetition_penalty))
    return invalid("repetition_penalty", "a strictly positive number (1: off)", o.repetition_penalty);
  return o;
}

void apply_repetition_penalty(std::vector<float>& logits, const std::vector<std::int64_t>& seen, double penalty) {
  const float p = static_cast<float>(penalty);
  // gather → where → scatter: an id seen twice is penalised once.
  const std::set<std::int64_t> distinct(seen.begin(), seen.end());
  for (const std::int64_t id : distinct) {
    if (id < 0 || static_cast<std::size_t>(id) >= logits.size()) continue;
    float& x = logits[static_cast<std::size_t>(id)];
    x = x < 0 ? x * p : x / p;
  }
}

void apply_temperature(std::vector<float>& logits, double temperature) {
  const float t = static_cast<float>(temperature);
  for (float& x : logits) x /= t;
}

void apply_top_k(std::vector<float>& logits, std::int64_t top_k, std::size_t min_tokens_to_keep) {
  const std::size_t k = std::min(std::max(static_cast<std::size_t>(top_k), min_tokens_to_keep), logits.size());
  if (k == 0) return;
  // The k-th largest value (torch.topk(scores, k)[0][..., -1]); everything below it goes.
  std::vector<float> sorted(logits);
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(k - 1), sorted.end(), std::greater<float>());
  const float kth = sorted[k - 1];
  for (float& x : logits)
    if (x < kth) x = kFiltered;
}

void apply_top_p(std::vector<float>& logits, double top_p, std::size_t min_tokens_to_keep) {
  const std::size_t n = logits.size();
  if (n == 0) return;
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return logits[a] < logits[b]; });
  // softmax over the ascending row, then its running sum, in float.
  const float max = logits[order.back()];
  std::vector<float> weights(n);
  float total = 0;
  for (std::size_t i = 0; i < n; ++i) total += weights[i] = std::exp(logits[order[i]] - max);
  const float threshold = static_cast<float>(1.0 - top_p);
  const std::size_t keep_from = n > min_tokens_to_keep ? n - min_tokens_to_keep : 0;
  float cumulative = 0;
  std::vector<bool> remove(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    cumulative += weights[i] / total;
    remove[i] = cumulative <= threshold && i < keep_from;
  }
  for (std::size_t i = 0; i < n; ++i)
    if (remove[i]) logits[order[i]] = kFiltered;
}

void process_logits(std::vector<float>& logits, const SamplingOptions& o, const std::vector<std::int64_t>& seen) {
  if (o.repetition_penalty != 1.0) apply_repetition_penalty(logits, seen, o.repetition_penalty);
  if (o.greedy) return;
  if (o.temperature != 1.0) apply_temperature(logits, o.temperature);
  if (o.top_k != 0) apply_top_k(logits, o.top_k);
  if (o.top_p < 1.0) apply_top_p(logits, o.top_p);
}

}  // namespace memfit::generate
