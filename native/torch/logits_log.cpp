#include "logits_log.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "failure.h"

namespace memfit::torchrt {

LogitsLog::LogitsLog(std::string path) : path_(std::move(path)), out_(path_, std::ios::trunc) {
  if (!out_) throw Failure{FailureKind::kFile, fmt::format("--logits-out: cannot create {}", path_)};
}

void LogitsLog::write(std::size_t prompt, std::size_t step, const at::Tensor& logits) {
  const at::Tensor l = logits.to(at::kCPU, at::kFloat).contiguous();
  const float* p = l.data_ptr<float>();
  nlohmann::json j = {{"prompt", prompt}, {"step", step}, {"logits", std::vector<double>(p, p + l.numel())}};
  out_ << j.dump() << '\n';
  out_.flush();
  if (!out_) throw Failure{FailureKind::kFile, fmt::format("--logits-out: cannot write {}", path_)};
}

}  // namespace memfit::torchrt
