#include "generation.h"

#include <algorithm>
#include <chrono>

#include "failure.h"

namespace memfit::torchrt {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t argmax(const at::Tensor& logits, const std::vector<std::int64_t>&) {
  return logits.argmax(-1).item<std::int64_t>();
}

}  // namespace

std::int64_t choose_next(const GenerateRequest& req, const at::Tensor& logits, const std::vector<std::int64_t>& ids) {
  const at::Tensor last = logits.select(1, logits.size(1) - 1)[0].contiguous();
  if (req.on_logits) req.on_logits(last);
  return req.choose ? req.choose(last, ids) : argmax(last, ids);
}

GenerateResult generate(Executor& exec, const GenerateRequest& req) {
  ForwardState s;
  s.use_cache = true;
  s.capacity = static_cast<std::int64_t>(req.prompt.size()) + req.max_new_tokens;
  return generate_steps(
      req,
      [&](const at::Tensor& input, const std::vector<std::int64_t>& ids) {
        return choose_next(req, exec.forward(input, &s), ids);
      },
      [&] { return exec.stats(); });
}

Decoding::Decoding(const GenerateRequest& req) : req_(req), ids_(req.prompt) {
  if (req.prompt.empty())
    throw Failure{FailureKind::kUsage, "the prompt is empty: generation needs at least one token id"};
  out_.stopped_at = "max_new_tokens";
  input_ = at::tensor(req.prompt, at::TensorOptions().dtype(at::kLong)).view({1, -1});
  done_ = req.max_new_tokens <= 0;
}

void Decoding::accept(std::int64_t next, double seconds, const ExecStats& before, const ExecStats& after) {
  if (out_.new_ids.empty()) {
    out_.prefill_seconds = seconds;
  } else {
    out_.decode_seconds += seconds;
    ++out_.decode_forwards;
    out_.decode_streamed_bytes += after.streamed_bytes - before.streamed_bytes;
    out_.decode_read_bytes += after.read_bytes - before.read_bytes;
    out_.decode_read_seconds += after.read_seconds - before.read_seconds;
  }
  ids_.push_back(next);
  out_.new_ids.push_back(next);
  const bool more = !req_.on_token || req_.on_token(next);
  if (std::find(req_.eos.begin(), req_.eos.end(), next) != req_.eos.end()) {
    out_.stopped_at = "eos";
    done_ = true;
  } else if (!more) {
    out_.stopped_at = "stop";
    done_ = true;
  } else if (static_cast<int>(out_.new_ids.size()) >= req_.max_new_tokens) {
    done_ = true;
  }
  input_ = at::tensor(std::vector<std::int64_t>{next}, at::TensorOptions().dtype(at::kLong)).view({1, 1});
  if (done_ && req_.on_end) req_.on_end();
}

GenerateResult generate_steps(const GenerateRequest& req, const DecodeStep& step,
                              const std::function<ExecStats()>& stats) {
  Decoding d(req);
  while (!d.done()) {
    const ExecStats before = stats();
    const auto t0 = Clock::now();
    const std::int64_t next = step(d.input(), d.ids());
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    d.accept(next, seconds, before, stats());
  }
  return d.result();
}

}  // namespace memfit::torchrt
