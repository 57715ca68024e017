// memfit/generate/sampling.h — the next token from one row of logits, as transformers'
// generate() picks it: the repetition penalty (a logits processor, applied in greedy and sampled
// decoding alike), then for sampling the warpers temperature → top-k → top-p (each with
// min_tokens_to_keep = 1), then a draw from the softmax. Pure C++ on float logits, no torch.
//
// Seeded draws come from std::mt19937_64: the same seed gives the same tokens in memfit (natively
// and in WebAssembly), but not the tokens torch.multinomial draws in transformers for that seed.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "memfit/error.h"

namespace memfit::generate {

struct SamplingOptions {
  bool greedy = true;               // do_sample=False: the argmax (first index on ties)
  double temperature = 1.0;         // > 0; 1 leaves the logits as they are
  std::int64_t top_k = 0;           // 0: off (as generate() skips top_k=0)
  double top_p = 1.0;               // in [0, 1]; 1: off
  double repetition_penalty = 1.0;  // > 0; 1: off
  std::uint64_t seed = 0;
};

// kInvalidValue naming the option: temperature <= 0 (transformers' TemperatureLogitsWarper
// refuses it; memfit does not read 0 as greedy: use greedy), top_k < 0, top_p outside [0, 1],
// repetition_penalty <= 0, or a NaN.
Result<SamplingOptions> validated(SamplingOptions options);

// The processors, in place. Each is transformers' (generation/logits_process.py) on one row:
// RepetitionPenaltyLogitsProcessor: for each distinct id in `seen` (prompt + generated), a
// positive logit is divided by the penalty, a negative one multiplied.
void apply_repetition_penalty(std::vector<float>& logits, const std::vector<std::int64_t>& seen, double penalty);
// TemperatureLogitsWarper: logits / temperature.
void apply_temperature(std::vector<float>& logits, double temperature);
// TopKLogitsWarper: every logit below the k-th largest becomes -inf (ties with it are kept).
void apply_top_k(std::vector<float>& logits, std::int64_t top_k, std::size_t min_tokens_to_keep = 1);
// TopPLogitsWarper: sorted ascending, softmax, cumulative sum; tokens whose cumulative
// probability is <= 1 - top_p become -inf, except the min_tokens_to_keep most likely. Equal
// logits are ordered by index (a stable sort), so at a tie the lower index goes first.
void apply_top_p(std::vector<float>& logits, double top_p, std::size_t min_tokens_to_keep = 1);
// All that apply to these options, in generate()'s order (greedy: the repetition penalty only).
void process_logits(std::vector<float>& logits, const SamplingOptions& options, const std::vector<std::int64_t>& seen);

// The first index of the largest logit. kInvalidValue for an empty row or a NaN.
Result<std::int64_t> argmax(const std::vector<float>& logits);

// One draw from softmax(logits) with a uniform double in [0, 1) from the top 53 bits of one
// mt19937_64 output (fully specified, so the same on every platform).
Result<std::int64_t> sample(const std::vector<float>& logits, std::mt19937_64& rng);

// A generation's token choices: holds the options and the seeded generator.
class Sampler {
 public:
  explicit Sampler(const SamplingOptions& options);  // options as validated() accepts them
  // `seen` is every id so far (prompt + generated), for the repetition penalty.
  Result<std::int64_t> next(std::vector<float> logits, const std::vector<std::int64_t>& seen);

 private:
  SamplingOptions options_;
  std::mt19937_64 rng_;
};

}  // namespace memfit::generate
