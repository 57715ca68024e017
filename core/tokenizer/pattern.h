// core/tokenizer/pattern.h — `tokenizers`' Pattern (a literal {"String": …} or a {"Regex": …}),
// its matches, and how a NormalizedString is split by them (SplitDelimiterBehavior).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "components.h"

namespace memfit::tokenizer {

using Range = std::pair<std::size_t, std::size_t>;  // [begin, end) in bytes

class Pattern {
 public:
  // {"String": "…"} or {"Regex": "…"} at ctx.path.
  static Pattern from_json(const json& j, const BuildContext& ctx);
  static Pattern literal(std::string text);
  static Pattern regex(const std::string& pattern, const TextBackend& backend);
  // Non-overlapping matches left to right; an empty match right after the previous one is
  // skipped (the onig crate's find_iter).
  std::vector<Range> matches(std::string_view text) const;
  // Pattern::find_matches: the whole text as (range, is_match) pieces in order; "" → one
  // non-match.
  std::vector<std::pair<Range, bool>> pieces(std::string_view text) const;

 private:
  std::string literal_;
  std::shared_ptr<const CompiledRegex> regex_;
};

// Every match of `pattern` in `s` replaced by `content` (NormalizedString::replace).
std::string replace_all(std::string_view s, const Pattern& pattern, std::string_view content);

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };
SplitBehavior split_behavior(const json& j, const BuildContext& ctx);

// NormalizedString::split: `pieces` (from Pattern::pieces, or a character predicate) combined by
// `behavior`; the ranges kept, empty ones dropped.
std::vector<Range> split_ranges(std::vector<std::pair<Range, bool>> pieces, SplitBehavior behavior);
// The (range, is_match) pieces of `text` where each character for which is_match(c) holds is a
// match of its own (`tokenizers`' char-predicate Pattern).
template <typename Pred>
std::vector<std::pair<Range, bool>> char_pieces(std::string_view text, Pred&& is_match);

// Replaces `parent` in `out` by its sub-pieces at `ranges` (origin_len carried, see Split).
// The piece [begin, end) of `parent` (NormalizedString::slice), origin_len carried.
inline Split slice(const Split& parent, std::size_t begin, std::size_t end) {
  Split s;
  s.text = parent.text.substr(begin, end - begin);
  s.origin_len = parent.origin_len > begin ? parent.origin_len - begin : 0;
  return s;
}
void push_sub_splits(const Split& parent, const std::vector<Range>& ranges, std::vector<Split>& out);
// Applies fn(const Split&) -> std::vector<Range> to every piece that is not an added token.
template <typename Fn>
void split_each(std::vector<Split>& splits, Fn&& fn) {
  std::vector<Split> out;
  out.reserve(splits.size());
  for (Split& s : splits) {
    if (s.added) {
      out.push_back(std::move(s));
      continue;
    }
    push_sub_splits(s, fn(s), out);
  }
  splits = std::move(out);
}

template <typename Pred>
std::vector<std::pair<Range, bool>> char_pieces(std::string_view text, Pred&& is_match) {
  std::vector<std::pair<Range, bool>> out;
  if (text.empty()) return {{{0, 0}, false}};
  std::size_t prev = 0;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t n = 0;
    const char32_t c = decode_utf8(text, i, &n);
    if (is_match(c)) {
      if (prev != i) out.push_back({{prev, i}, false});
      out.push_back({{i, i + n}, true});
      prev = i + n;
    }
    i += n;
  }
  if (prev != text.size()) out.push_back({{prev, text.size()}, false});
  return out;
}

}  // namespace memfit::tokenizer
