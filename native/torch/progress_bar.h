// native/torch/progress_bar.h — bytes done / total as a bar on stderr, only when stderr is a
// terminal (logs and pipes stay clean). Redraws at most ~10 times a second.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace memfit::torchrt {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  ~ProgressBar();  // ends the line if anything was drawn
  void update(std::uint64_t done, std::uint64_t total);

 private:
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace memfit::torchrt
