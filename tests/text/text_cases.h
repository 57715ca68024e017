// tests/text/text_cases.h — what the portable TextBackend's tests share: the tokenizer.json
// patterns of real models, and generated text (fixed seed) from code points assigned long ago.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memfit::test {

// Pre-tokenizer patterns as published in tokenizer.json files, by model family.
struct NamedPattern {
  const char* name;
  const char* pattern;
};
const std::vector<NamedPattern>& real_tokenizer_patterns();

// `count` texts from a fixed-seed generator: words, contractions, whitespace runs (\r\n, NBSP,
// U+3000, …), digits, combining sequences, emoji, CJK, Hangul, scripts.
std::vector<std::string> generated_texts(std::uint32_t seed, int count);

}  // namespace memfit::test
