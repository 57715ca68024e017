// core/text/char_set.h — a set of code points as the regex engine's classes need it: ranges,
// general categories, property lists (scripts, Alphabetic), White_Space, nested sets (a class
// inside a class, \S, \P{…} are unions of possibly negated sets, as in Oniguruma), negation.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "unicode_data.h"

namespace memfit::text::regex {

class CharSet {
 public:
  bool negated = false;
  bool white_space = false;                             // the White_Space property (\s)
  std::uint32_t categories = 0;                         // bit k: CharCategory k
  std::vector<std::pair<char32_t, char32_t>> ranges;    // inclusive
  std::vector<InversionList> lists;                     // scripts, Alphabetic
  std::vector<CharSet> nested;                          // united with the items above

  void add(char32_t c) { ranges.push_back({c, c}); }
  void add_category(CharCategory k) { categories |= 1u << static_cast<unsigned>(k); }
  // Call once the items are complete: caches the answer for the first 2048 code points, where
  // most text is, so contains() does no table search there.
  void finish();
  bool contains(char32_t c) const {
    if (c < kCached) return (low_[c >> 6] >> (c & 63)) & 1u;
    return compute(c);
  }

 private:
  static constexpr char32_t kCached = 2048;
  bool compute(char32_t c) const;
  std::array<std::uint64_t, kCached / 64> low_{};
};

}  // namespace memfit::text::regex
