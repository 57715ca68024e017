// core/text/unicode_tables.h — the generated Unicode tables of the portable TextBackend
// (unicode_tables.cpp, made by scripts/gen-unicode-tables.py; the Unicode version is
// kUnicodeVersion). Range tables searched by binary search: compact (they ship in the page's
// text module) and fast enough for tokenizing prompts. Read them through unicode_data.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memfit::text::tables {

extern const char kUnicodeVersion[];
// (first code point << 5) | CharCategory, one entry where the category changes; sorted.
extern const std::uint32_t kCategoryRuns[];
extern const std::size_t kCategoryRuns_size;
// (first code point << 8) | canonical combining class, where it changes.
extern const std::uint32_t kCombiningClassRuns[];
extern const std::size_t kCombiningClassRuns_size;
// Simple lowercase: run i covers first + k*stride for k < count, each mapping to c + delta
// (delta as two's complement); CountStride = (count << 2) | stride.
extern const std::uint32_t kLowercaseFirst[], kLowercaseCountStride[], kLowercaseDelta[];
extern const std::size_t kLowercaseFirst_size, kLowercaseCountStride_size, kLowercaseDelta_size;
// Decomposition mappings (one level; Hangul syllables are algorithmic): key = cp | compat << 21,
// span = (offset into the pool << 5) | length.
extern const std::uint32_t kDecompositionKeys[], kDecompositionSpans[], kDecompositionPool[];
extern const std::size_t kDecompositionKeys_size, kDecompositionSpans_size, kDecompositionPool_size;
// Primary composites: (First[i], Second[i]) → Results[i], sorted by (first, second).
extern const std::uint32_t kCompositionFirst[], kCompositionSecond[], kCompositionResults[];
extern const std::size_t kCompositionFirst_size, kCompositionSecond_size, kCompositionResults_size;
// Inversion lists ([start, end + 1, start, …]) of scripts, in one pool.
struct ScriptEntry {
  const char* name;
  std::uint32_t begin, count;
};
extern const std::uint32_t kScriptRanges[];
extern const std::size_t kScriptRanges_size;
extern const ScriptEntry kScripts[];
extern const std::size_t kScripts_size;
extern const std::uint32_t kAlphabetic[];  // the Alphabetic property, an inversion list
extern const std::size_t kAlphabetic_size;

}  // namespace memfit::text::tables
