// core/tokenizer/unicode.h — UTF-8 walking and the character classes `tokenizers` uses (Rust's
// char methods, the regex crate's \w and \s), over the TextBackend's general categories.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "memfit/tokenizer/text_backend.h"
#include "memfit/utf8.h"

namespace memfit::tokenizer {

// The code point at s[i] and its length in bytes (s is valid UTF-8).
char32_t decode_utf8(std::string_view s, std::size_t i, std::size_t* length);
using memfit::append_utf8;  // memfit/utf8.h
// Byte offset of the first invalid sequence, or npos when `s` is valid UTF-8.
std::size_t invalid_utf8_at(std::string_view s);
// Rust's String::from_utf8_lossy: each maximal invalid subpart becomes U+FFFD.
std::string utf8_lossy(std::string_view bytes);

// Rust's char::is_whitespace (the White_Space property).
bool is_white_space(char32_t c);

struct CharClasses {
  const TextBackend* backend;
  CharCategory category(char32_t c) const { return backend->category(c); }
  bool is_letter(char32_t c) const;       // L*
  bool is_mark(char32_t c) const;         // M*
  bool is_numeric(char32_t c) const;      // Rust char::is_numeric: N*
  bool is_punctuation(char32_t c) const;  // P*
  bool is_word(char32_t c) const;         // the regex crate's Unicode \w
  bool is_alphanumeric(char32_t c) const; // Rust char::is_alphanumeric
};

// Apply `fn(c, out)` to each code point of `s`, building a new string.
template <typename Fn>
std::string map_chars(std::string_view s, Fn&& fn) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = 0;
    const char32_t c = decode_utf8(s, i, &n);
    fn(c, out);
    i += n;
  }
  return out;
}

}  // namespace memfit::tokenizer
