// native/torch/logits_log.h — `memfit generate --logits-out FILE`: each step's last-position logits
// as JSON Lines, `{"prompt": P, "step": S, "logits": [...]}` (P counts the prompts from 0, S the new
// tokens of that prompt from 0), written by the process that computes them — one process, or a
// pipeline's last rank. The tests compare a pipeline's steps with one process's by them.
//
// Each float32 is widened to double and printed as the shortest decimal that reads back as that
// double, so reading the file gives the same float bits.
#pragma once

#include <cstddef>
#include <fstream>
#include <string>

#include <ATen/ATen.h>

namespace memfit::torchrt {

class LogitsLog {
 public:
  explicit LogitsLog(std::string path);  // throws Failure(kFile) naming it when it cannot be created
  // `logits`: [V] float32 on the CPU.
  void write(std::size_t prompt, std::size_t step, const at::Tensor& logits);

 private:
  std::string path_;
  std::ofstream out_;
};

}  // namespace memfit::torchrt
