// core/tokenizer/byte_level.h — GPT-2's byte ↔ character table (bytes_to_unicode) and its
// pre-tokenization pattern, shared by the ByteLevel normalizer, pre-tokenizer and decoder.
#pragma once

#include <string>
#include <string_view>

namespace memfit::tokenizer {

// The regex `tokenizers`' ByteLevel splits with when use_regex is true (GPT-2's).
inline constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Each byte of `s` as its printable character, UTF-8 encoded.
std::string bytes_to_chars(std::string_view s);
// The byte a byte-level character stands for, or -1 when `c` is not one.
int char_to_byte(char32_t c);

}  // namespace memfit::tokenizer
