#include "progress_bar.h"

#include <unistd.h>

#include <fmt/format.h>

#include "memfit/report/convert_bytes.h"

namespace memfit::torchrt {

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)), enabled_(isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()), last_(start_) {}

ProgressBar::~ProgressBar() {
  if (drawn_) fmt::print(stderr, "\n");
}

void ProgressBar::update(std::uint64_t done, std::uint64_t total) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (done < total && drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  drawn_ = true;
  constexpr int kWidth = 30;
  const double frac = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const int filled = static_cast<int>(frac * kWidth);
  const double secs = std::chrono::duration<double>(now - start_).count();
  const double rate = secs > 0 ? static_cast<double>(done) / secs : 0.0;
  fmt::print(stderr, "\r{} [{:=<{}}{: <{}}] {:5.1f}% {} / {} ({}/s)  ", label_, "", filled, "",
             kWidth - filled, frac * 100, convert_bytes(static_cast<double>(done)),
             convert_bytes(static_cast<double>(total)), convert_bytes(rate));
  std::fflush(stderr);
}

}  // namespace memfit::torchrt
