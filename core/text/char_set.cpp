#include "char_set.h"

#include "unicode.h"  // core/tokenizer: is_white_space

namespace memfit::text::regex {

void CharSet::finish() {
  for (CharSet& n : nested) n.finish();
  low_.fill(0);
  for (char32_t c = 0; c < kCached; ++c)
    if (compute(c)) low_[c >> 6] |= std::uint64_t{1} << (c & 63);
}

bool CharSet::compute(char32_t c) const {
  bool in = (white_space && tokenizer::is_white_space(c)) ||
            (categories != 0 && ((categories >> static_cast<unsigned>(general_category(c))) & 1u) != 0);
  for (std::size_t i = 0; !in && i < ranges.size(); ++i) in = ranges[i].first <= c && c <= ranges[i].second;
  for (std::size_t i = 0; !in && i < lists.size(); ++i) in = lists[i].contains(c);
  for (std::size_t i = 0; !in && i < nested.size(); ++i) in = nested[i].contains(c);
  return in != negated;
}

}  // namespace memfit::text::regex
