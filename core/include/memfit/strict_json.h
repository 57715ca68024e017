// memfit/strict_json.h — JSON parsing for untrusted files.
//
// nlohmann::json silently keeps the last of duplicate keys and would build arbitrarily deep
// trees; file formats need both rejected, and a clear message that names the file.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "memfit/config.h"

namespace memfit {

// Offset of the first byte that breaks UTF-8 (overlongs, surrogates and > U+10FFFF included),
// or nullopt when `s` is valid.
std::optional<std::size_t> invalid_utf8_at(std::string_view s);

// Deepest nesting of arrays/objects in `s`, stopping early once `limit` is exceeded (strings
// and escapes are skipped). Runs in one pass with O(1) memory.
std::size_t json_depth(std::string_view s, std::size_t limit);

struct StrictJsonError {
  enum Kind { kSyntax, kDuplicateKey, kTooDeep } kind;
  std::string detail;  // "at byte 17: …", "duplicate key 'x'", …
};

// Parses with key order kept; duplicate keys in any object and nesting deeper than `max_depth`
// are errors. Returns the error instead of throwing.
std::optional<StrictJsonError> parse_strict_json(std::string_view text, std::size_t max_depth,
                                                 Json* out);

}  // namespace memfit
