// memfit/tokenizer/text_backend.h — what the tokenizer needs from a Unicode library, as an
// interface: core stays dependency-free (and WebAssembly-buildable); native/text implements it with
// PCRE2 and utf8proc (memfit/text/native_text_backend.h in native/text).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace memfit::tokenizer {

enum class NormalForm { kNFC, kNFD, kNFKC, kNFKD };

// Unicode general categories, in utf8proc's order (Cn first), so a backend can cast.
enum class CharCategory : std::uint8_t {
  kCn, kLu, kLl, kLt, kLm, kLo, kMn, kMc, kMe, kNd, kNl, kNo, kPc, kPd, kPs, kPe, kPi, kPf, kPo,
  kSm, kSc, kSk, kSo, kZs, kZl, kZp, kCc, kCf, kCs, kCo,
};

// One compiled regular expression with Oniguruma's (the `tokenizers` crate's engine) meaning of
// the patterns tokenizer.json files use: Unicode classes (\p{L}, \s, \w), lookahead, (?i:…).
class CompiledRegex {
 public:
  virtual ~CompiledRegex() = default;
  // The leftmost match starting at or after byte `from` of `text` (valid UTF-8, `from` on a
  // character boundary): true with [begin, end) set, false when there is none. Thread-safe.
  virtual bool search(std::string_view text, std::size_t from, std::size_t& begin,
                      std::size_t& end) const = 0;
};

class TextBackend {
 public:
  virtual ~TextBackend() = default;
  // Throws memfit::Error (kInvalidValue) naming the pattern and the engine's message.
  virtual std::unique_ptr<CompiledRegex> compile(const std::string& pattern) const = 0;
  // `utf8` is valid UTF-8; the result is too.
  virtual std::string normalize(std::string_view utf8, NormalForm form) const = 0;
  virtual CharCategory category(char32_t c) const = 0;
  // The one-code-point lowercase mapping (UnicodeData's simple mapping).
  virtual char32_t simple_lowercase(char32_t c) const = 0;
  // The end (a byte offset) of the extended grapheme cluster (UAX #29) that starts at byte `from`
  // of `utf8` (valid UTF-8, from < size, on a character boundary): the Rust crate
  // unicode-segmentation's graphemes(true), which the Precompiled normalizer walks.
  virtual std::size_t grapheme_end(std::string_view utf8, std::size_t from) const = 0;
};

}  // namespace memfit::tokenizer
