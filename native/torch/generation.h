// native/torch/generation.h — the decoding loop over an Executor: one prefill forward for the
// prompt, then one forward per new token against the KV cache, until an EOS id, a caller's stop,
// or max_new_tokens. Choosing the next id (greedy, sampling) and what to do with each id
// (streaming text, stop strings) are the caller's; this file times the two phases and keeps the
// executor's streaming counters for each.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "executor.h"

namespace memfit::torchrt {

struct GenerateRequest {
  std::vector<std::int64_t> prompt;  // one row
  int max_new_tokens = 20;
  std::vector<std::int64_t> eos;     // stop after generating any of these (it is kept)
  // The next id from the last position's logits [V] (float32, CPU) and every id so far (prompt
  // then new ones). Unset: the argmax (greedy, the lowest id among equal maxima, as torch.argmax).
  std::function<std::int64_t(const at::Tensor& logits, const std::vector<std::int64_t>& ids)> choose;
  // Called with each new id (already appended); returning false stops generation ("stop").
  std::function<bool(std::int64_t id)> on_token;
  // Called with each step's last-position logits [V] (float32, CPU) before the choice
  // (generate --logits-out: what the tests compare a pipeline's steps by).
  std::function<void(const at::Tensor& logits)> on_logits;
  // Called once the sequence has ended (its text can be finished).
  std::function<void()> on_end;
};

struct GenerateResult {
  std::vector<std::int64_t> new_ids;
  std::string stopped_at;            // "eos", "stop" or "max_new_tokens"
  double prefill_seconds = 0;        // the prompt's forward (it yields the first new id)
  double decode_seconds = 0;         // every later forward, one new id each
  int decode_forwards = 0;
  std::uint64_t decode_streamed_bytes = 0;  // brought to the execution device during decode
  std::uint64_t decode_read_bytes = 0;      // read from disk during decode
  double decode_read_seconds = 0;           // time those reads took (prefetch threads included)

  double tokens_per_second() const { return decode_seconds > 0 ? decode_forwards / decode_seconds : 0.0; }
  double streamed_bytes_per_token() const {
    return decode_forwards > 0 ? static_cast<double>(decode_streamed_bytes) / decode_forwards : 0.0;
  }
  // Tokens per second if decoding were bound by reading alone: the reads' own speed over the
  // bytes each token reads. 0 when decoding read nothing from disk.
  double io_bound_tokens_per_second() const {
    return decode_read_seconds > 0 && decode_forwards > 0 ? decode_forwards / decode_read_seconds : 0.0;
  }
};

GenerateResult generate(Executor& exec, const GenerateRequest& request);

// One sequence's decoding, step by step: what to feed next, and what each chosen id does (EOS,
// the caller's stop, max_new_tokens) — the loop of generate_steps, and of a pipeline's rank 0,
// which keeps several sequences in flight at once (pipeline_rank.h).
class Decoding {
 public:
  explicit Decoding(const GenerateRequest& request);  // throws Failure(kUsage) on an empty prompt
  bool done() const { return done_; }
  const at::Tensor& input() const { return input_; }  // [1, T] ids: the prompt, then the last id
  const std::vector<std::int64_t>& ids() const { return ids_; }  // every id so far
  // Records the id a step chose; `seconds` the step took, `before`/`after` the streaming
  // counters around it. The first step is the prefill.
  void accept(std::int64_t next, double seconds, const ExecStats& before, const ExecStats& after);
  const GenerateResult& result() const { return out_; }

 private:
  const GenerateRequest& req_;
  GenerateResult out_;
  std::vector<std::int64_t> ids_;
  at::Tensor input_;
  bool done_ = false;
};

// The loop of generate() over any step — feed `input` ([1, T] ids), return the next id given
// every id so far — with `stats` the streaming counters it times phases by (a pipeline's rank 0
// steps through every rank: pipeline_rank.h).
using DecodeStep = std::function<std::int64_t(const at::Tensor& input, const std::vector<std::int64_t>& ids)>;
GenerateResult generate_steps(const GenerateRequest& request, const DecodeStep& step,
                              const std::function<ExecStats()>& stats);

// The next id by `choose` (argmax when unset) from a forward's logits [1, T, V]: its last position.
std::int64_t choose_next(const GenerateRequest& request, const at::Tensor& logits, const std::vector<std::int64_t>& ids);

}  // namespace memfit::torchrt
