// memfit/format/strict_json.h — JSON parsing for untrusted files.
//
// nlohmann::json silently keeps the last of duplicate keys and would build arbitrarily deep
// trees; file formats need both rejected, and a clear message that names the file.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "memfit/model/config.h"

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

// Runs nlohmann's SAX parser over `text` with any handler. Handlers are passed as the base
// class so that one instantiation of the parser serves them all (each handler type would
// compile the parser again: ~3.5 KB of WASM apiece); the virtual calls cost nothing measurable.
bool sax_parse_json(std::string_view text, nlohmann::json_sax<Json>* handler);

// Which JSON: kStrict (RFC 8259 and no repeated key: file formats we check strictly, such as
// safetensors headers, whose format forbids NaN and infinities) or kPython, what Python's
// json.loads accepts when transformers reads config.json: a repeated key keeps its first
// position and takes the last value, and the bare words NaN, Infinity and -Infinity are numbers
// (Python's json.dumps writes them; real configs carry them, e.g. Nemotron-H's time_step_limit).
enum class JsonDialect { kStrict, kPython };

// Parses with key order kept; nesting deeper than `max_depth` is an error, and so is anything
// `dialect` refuses. Returns the error instead of throwing. The one JSON parser of core: a second
// (nlohmann's DOM parser) would cost the WASM bundle ~13 KB.
std::optional<StrictJsonError> parse_strict_json(std::string_view text, std::size_t max_depth,
                                                 Json* out,
                                                 JsonDialect dialect = JsonDialect::kStrict);

}  // namespace memfit
