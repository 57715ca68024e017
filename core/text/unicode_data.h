// core/text/unicode_data.h — lookups over the generated tables (unicode_tables.h): what the
// portable TextBackend and its regex engine ask of Unicode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "memfit/tokenizer/text_backend.h"

namespace memfit::text {

using tokenizer::CharCategory;

const char* unicode_version();
CharCategory general_category(char32_t c);
char32_t simple_lowercase(char32_t c);
std::uint8_t combining_class(char32_t c);
// The one-level decomposition of c: (pointer into the pool, length), or (nullptr, 0). `compat`
// asks for compatibility mappings too.
std::pair<const std::uint32_t*, std::size_t> decomposition(char32_t c, bool compat);
// The primary composite of (a, b), or 0.
char32_t compose_pair(char32_t a, char32_t b);

// A set of code points as an inversion list ([start, end + 1, …]).
struct InversionList {
  const std::uint32_t* data = nullptr;
  std::size_t size = 0;
  bool contains(char32_t c) const;
};
// A property name as Unicode's loose matching compares it (UAX44-LM3, as Oniguruma does):
// lowercase, without spaces, '_' and '-'.
std::string property_key(std::string_view name);
// The script whose long name (e.g. "Han") has property key `key`; *found false when none.
InversionList script(std::string_view key, bool* found);
InversionList alphabetic();

}  // namespace memfit::text
