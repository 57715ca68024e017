// core/text/grapheme.h — extended grapheme clusters (UAX #29) from the tables the portable backend
// already has, for the Precompiled normalizer in the page's text module.
#pragma once

#include <cstddef>
#include <string_view>

namespace memfit::text {

// The end of the cluster starting at byte `from` of valid UTF-8. UAX #29's rules with the
// Grapheme_Cluster_Break classes approximated from the general categories (no separate table):
// Extend = Mn, Me, emoji modifiers, ZWNJ; SpacingMark = Mc; Control = Cc, Zl, Zp, Cf but ZW(N)J;
// Extended_Pictographic = So; Hangul L/V/T/LV/LVT by their ranges; regional indicators in pairs;
// Prepend by its short list. Exact for the text tokenizers meet in practice; the tests hold it to utf8proc.
std::size_t grapheme_end(std::string_view utf8, std::size_t from);

}  // namespace memfit::text
