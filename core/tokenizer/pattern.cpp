#include "pattern.h"

#include <algorithm>

#include <fmt/format.h>

#include "json_fields.h"

namespace memfit::tokenizer {

Pattern Pattern::from_json(const json& j, const BuildContext& ctx) {
  if (j.is_object() && j.size() == 1 && j.contains("String") && j["String"].is_string())
    return literal(j["String"].get<std::string>());
  if (j.is_object() && j.size() == 1 && j.contains("Regex") && j["Regex"].is_string())
    return regex(j["Regex"].get<std::string>(), *ctx.backend);
  ctx.fail(ErrorCode::kInvalidValue, fmt::format("a pattern must be {{\"String\": …}} or {{\"Regex\": …}}, got {}", j.dump()));
}

Pattern Pattern::literal(std::string text) {
  Pattern p;
  p.literal_ = std::move(text);
  return p;
}

Pattern Pattern::regex(const std::string& pattern, const TextBackend& backend) {
  Pattern p;
  p.regex_ = backend.compile(pattern);
  return p;
}

std::vector<Range> Pattern::matches(std::string_view text) const {
  std::vector<Range> out;
  if (!regex_) {
    if (literal_.empty()) return out;  // an empty String pattern matches nothing (tokenizers' special case)
    for (std::size_t at = text.find(literal_); at != std::string_view::npos; at = text.find(literal_, at + literal_.size()))
      out.push_back({at, at + literal_.size()});
    return out;
  }
  std::size_t from = 0;
  bool have_last = false;
  std::size_t last_end = 0;
  while (from <= text.size()) {
    std::size_t b = 0, e = 0;
    if (!regex_->search(text, from, b, e)) break;
    if (b == e && have_last && last_end == e) {
      // onig's FindMatches: no empty match right after the previous match; step one character.
      if (from >= text.size()) break;
      std::size_t n = 0;
      decode_utf8(text, from, &n);
      from += n;
      continue;
    }
    out.push_back({b, e});
    from = e;
    have_last = true;
    last_end = e;
  }
  return out;
}

std::vector<std::pair<Range, bool>> Pattern::pieces(std::string_view text) const {
  if (text.empty()) return {{{0, 0}, false}};
  std::vector<std::pair<Range, bool>> out;
  std::size_t prev = 0;
  for (const Range& m : matches(text)) {
    if (prev != m.first) out.push_back({{prev, m.first}, false});
    out.push_back({m, true});
    prev = m.second;
  }
  if (prev != text.size()) out.push_back({{prev, text.size()}, false});
  return out;
}

SplitBehavior split_behavior(const json& j, const BuildContext& ctx) {
  static const std::pair<const char*, SplitBehavior> kNames[] = {
      {"Removed", SplitBehavior::kRemoved},
      {"Isolated", SplitBehavior::kIsolated},
      {"MergedWithPrevious", SplitBehavior::kMergedWithPrevious},
      {"MergedWithNext", SplitBehavior::kMergedWithNext},
      {"Contiguous", SplitBehavior::kContiguous},
  };
  if (j.is_string())
    for (const auto& [name, b] : kNames)
      if (j.get<std::string>() == name) return b;
  ctx.fail(ErrorCode::kInvalidValue,
           fmt::format("behavior must be one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous; got {}", j.dump()));
}

std::vector<Range> split_ranges(std::vector<std::pair<Range, bool>> pieces, SplitBehavior behavior) {
  std::vector<std::pair<Range, bool>> merged;
  switch (behavior) {
    case SplitBehavior::kIsolated:
      merged = std::move(pieces);
      break;
    case SplitBehavior::kRemoved:
      for (auto& p : pieces)
        if (!p.second) merged.push_back(p);
      break;
    case SplitBehavior::kMergedWithPrevious: {
      bool previous_match = false;
      for (auto& [r, is_match] : pieces) {
        if (is_match && !previous_match && !merged.empty()) merged.back().first.second = r.second;
        else merged.push_back({r, false});
        previous_match = is_match;
      }
      break;
    }
    case SplitBehavior::kMergedWithNext: {
      bool previous_match = false;
      for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
        const auto& [r, is_match] = *it;
        if (is_match && !previous_match && !merged.empty()) merged.back().first.first = r.first;
        else merged.push_back({r, false});
        previous_match = is_match;
      }
      std::reverse(merged.begin(), merged.end());
      break;
    }
    case SplitBehavior::kContiguous: {
      bool previous_match = false;
      for (auto& [r, is_match] : pieces) {
        if (is_match == previous_match && !merged.empty()) merged.back().first.second = r.second;
        else merged.push_back({r, false});
        previous_match = is_match;
      }
      break;
    }
  }
  std::vector<Range> out;
  out.reserve(merged.size());
  for (const auto& p : merged)
    if (p.first.second > p.first.first) out.push_back(p.first);
  return out;
}

std::string replace_all(std::string_view s, const Pattern& pattern, std::string_view content) {
  std::string out;
  std::size_t prev = 0;
  for (const Range& m : pattern.matches(s)) {
    out.append(s.substr(prev, m.first - prev)).append(content);
    prev = m.second;
  }
  return out.append(s.substr(prev));
}

void push_sub_splits(const Split& parent, const std::vector<Range>& ranges, std::vector<Split>& out) {
  for (const Range& r : ranges) {
    if (r.second <= r.first) continue;
    out.push_back(slice(parent, r.first, r.second));
  }
}

}  // namespace memfit::tokenizer
