#include "unicode_data.h"

#include <algorithm>

#include "unicode_tables.h"

namespace memfit::text {
namespace {

// The index of the last run whose start (entry >> shift) is ≤ c.
std::size_t run_index(const std::uint32_t* runs, std::size_t n, char32_t c, unsigned shift) {
  const std::uint32_t* it = std::upper_bound(runs, runs + n, c, [shift](char32_t v, std::uint32_t e) { return v < (e >> shift); });
  return static_cast<std::size_t>(it - runs) - 1;  // runs[0] starts at U+0000
}

}  // namespace

const char* unicode_version() { return tables::kUnicodeVersion; }

CharCategory general_category(char32_t c) {
  if (c >= 0x110000) return CharCategory::kCn;
  const std::uint32_t e = tables::kCategoryRuns[run_index(tables::kCategoryRuns, tables::kCategoryRuns_size, c, 5)];
  return static_cast<CharCategory>(e & 0x1Fu);
}

std::uint8_t combining_class(char32_t c) {
  if (c < 0x300 || c >= 0x110000) return 0;
  const std::uint32_t e = tables::kCombiningClassRuns[run_index(tables::kCombiningClassRuns, tables::kCombiningClassRuns_size, c, 8)];
  return static_cast<std::uint8_t>(e & 0xFFu);
}

char32_t simple_lowercase(char32_t c) {
  if (c < 0x80) return c >= 'A' && c <= 'Z' ? c + 32 : c;
  const std::uint32_t* first = tables::kLowercaseFirst;
  const std::uint32_t* it = std::upper_bound(first, first + tables::kLowercaseFirst_size, static_cast<std::uint32_t>(c));
  if (it == first) return c;
  const std::size_t i = static_cast<std::size_t>(it - first) - 1;
  const std::uint32_t count = tables::kLowercaseCountStride[i] >> 2, stride = tables::kLowercaseCountStride[i] & 3u;
  const std::uint32_t offset = static_cast<std::uint32_t>(c) - first[i];
  if (offset % stride != 0 || offset / stride >= count) return c;
  return static_cast<char32_t>(static_cast<std::uint32_t>(c) + tables::kLowercaseDelta[i]);  // wraps: delta may be negative
}

std::pair<const std::uint32_t*, std::size_t> decomposition(char32_t c, bool compat) {
  const std::uint32_t* keys = tables::kDecompositionKeys;
  const std::uint32_t* end = keys + tables::kDecompositionKeys_size;
  const std::uint32_t* it = std::lower_bound(keys, end, static_cast<std::uint32_t>(c),
                                             [](std::uint32_t e, std::uint32_t v) { return (e & 0x1FFFFFu) < v; });
  if (it == end || (*it & 0x1FFFFFu) != c) return {nullptr, 0};
  if ((*it >> 21) != 0 && !compat) return {nullptr, 0};
  const std::uint32_t span = tables::kDecompositionSpans[it - keys];
  return {tables::kDecompositionPool + (span >> 5), span & 0x1Fu};
}

char32_t compose_pair(char32_t a, char32_t b) {
  const std::uint32_t* first = tables::kCompositionFirst;
  const std::size_t n = tables::kCompositionFirst_size;
  const auto lo = std::lower_bound(first, first + n, static_cast<std::uint32_t>(a));
  for (std::size_t i = static_cast<std::size_t>(lo - first); i < n && first[i] == a; ++i)
    if (tables::kCompositionSecond[i] == b) return tables::kCompositionResults[i];
  return 0;
}

bool InversionList::contains(char32_t c) const {
  // The number of boundaries ≤ c is odd inside the set.
  const std::uint32_t* it = std::upper_bound(data, data + size, static_cast<std::uint32_t>(c));
  return ((it - data) & 1) != 0;
}

std::string property_key(std::string_view name) {
  std::string key;
  for (const char c : name)
    if (c != ' ' && c != '_' && c != '-') key += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return key;
}

InversionList script(std::string_view key, bool* found) {
  for (std::size_t i = 0; i < tables::kScripts_size; ++i)
    if (key == property_key(tables::kScripts[i].name)) {
      *found = true;
      return {tables::kScriptRanges + tables::kScripts[i].begin, tables::kScripts[i].count};
    }
  *found = false;
  return {};
}

InversionList alphabetic() { return {tables::kAlphabetic, tables::kAlphabetic_size}; }

}  // namespace memfit::text
