#include "generation.h"

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

GenerateResult generate_steps(const GenerateRequest& req, const DecodeStep& step,
                              const std::function<ExecStats()>& stats) {
  if (req.prompt.empty())
    throw Failure{FailureKind::kUsage, "the prompt is empty: generation needs at least one token id"};
  GenerateResult out;
  out.stopped_at = "max_new_tokens";
  std::vector<std::int64_t> ids = req.prompt;
  at::Tensor input = at::tensor(req.prompt, at::TensorOptions().dtype(at::kLong)).view({1, -1});
  for (int i = 0; i < req.max_new_tokens; ++i) {
    const ExecStats before = stats();
    const auto t0 = Clock::now();
    const std::int64_t next = step(input, ids);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (i == 0) {
      out.prefill_seconds = seconds;
    } else {
      const ExecStats after = stats();
      out.decode_seconds += seconds;
      ++out.decode_forwards;
      out.decode_streamed_bytes += after.streamed_bytes - before.streamed_bytes;
      out.decode_read_bytes += after.read_bytes - before.read_bytes;
      out.decode_read_seconds += after.read_seconds - before.read_seconds;
    }
    ids.push_back(next);
    out.new_ids.push_back(next);
    const bool more = !req.on_token || req.on_token(next);
    if (std::find(req.eos.begin(), req.eos.end(), next) != req.eos.end()) {
      out.stopped_at = "eos";
      break;
    }
    if (!more) {
      out.stopped_at = "stop";
      break;
    }
    input = at::tensor(std::vector<std::int64_t>{next}, at::TensorOptions().dtype(at::kLong)).view({1, 1});
  }
  return out;
}

}  // namespace memfit::torchrt
