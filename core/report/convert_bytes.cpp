#include "memfit/report/convert_bytes.h"

#include <array>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "memfit/format/parse_double.h"

namespace memfit {

std::string python_round2_repr(double x) {
  // Step 1: Python's round(x, 2) is the correctly rounded decimal of the exact binary value
  // (ties to even), read back as a double. fmt's "{:.2f}" rounds the same way (as does glibc's
  // printf("%.2f"); fmt rather than snprintf keeps printf's float code out of the WASM bundle).
  const std::string two = fmt::format("{:.2f}", x);
  const double rounded = parse_double(two.c_str(), nullptr);
  // Step 2: repr() is the shortest string that round-trips; fmt's "{}" gives the same digits.
  std::string s = fmt::format("{}", rounded);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // Python always shows ".0"
  return s;
}

std::string convert_bytes(double size, bool python_int) {
  static constexpr std::array<const char*, 5> kUnits{"bytes", "KB", "MB", "GB", "TB"};
  if (python_int && size < 1024.0) return fmt::format("{:.0f} bytes", size);
  for (const char* unit : kUnits) {
    if (size < 1024.0) return fmt::format("{} {}", python_round2_repr(size), unit);
    size /= 1024.0;
  }
  return fmt::format("{} PB", python_round2_repr(size));
}

}  // namespace memfit
