// PCRE2 with PCRE2_UTF | PCRE2_UCP stands in for Oniguruma, the engine the `tokenizers` crate
// compiles tokenizer.json's patterns with: Unicode properties (\p{L}), \s \w \d by Unicode
// property, lookaround, (?i:…) are the same in both (tests/web/tokenizer-oracle.test.mjs holds
// them to the real library). Known differences: each carries its own Unicode version, so a
// character assigned recently may be classed differently; and PCRE2 10.42's \s also matches
// U+180E MONGOLIAN VOWEL SEPARATOR (White_Space until Unicode 6.3), Oniguruma's does not, so \s
// (and \S outside a class) are spelled out as the White_Space set before compiling.
#include "native_text_backend.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <utf8proc.h>

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "memfit/error.h"

namespace memfit::text {
namespace {

using tokenizer::CharCategory;
using tokenizer::CompiledRegex;
using tokenizer::NormalForm;

// The White_Space property (Oniguruma's \s), as PCRE2 class items.
constexpr const char* kWhiteSpace = "\\t\\n\\x0B\\f\\r\\x20\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

// \s → [White_Space] (inside a class: its items), \S → [^White_Space] outside a class.
std::string oniguruma_spaces(const std::string& pattern) {
  std::string out;
  bool in_class = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char n = pattern[i + 1];
      if (n == 's') out += in_class ? std::string(kWhiteSpace) : "[" + std::string(kWhiteSpace) + "]";
      else if (n == 'S' && !in_class) out += "[^" + std::string(kWhiteSpace) + "]";
      else out.append(pattern, i, 2);
      ++i;
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
      out += c;
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') { out += '^'; ++i; }
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') { out += ']'; ++i; }  // a literal ']'
      continue;
    }
    if (c == ']' && in_class) in_class = false;
    out += c;
  }
  return out;
}

class Pcre2Regex final : public CompiledRegex {
 public:
  explicit Pcre2Regex(const std::string& pattern) {
    int error = 0;
    PCRE2_SIZE offset = 0;
    const std::string rewritten = oniguruma_spaces(pattern);
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(rewritten.data()), rewritten.size(), PCRE2_UTF | PCRE2_UCP,
                          &error, &offset, nullptr);
    if (!code_) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error, message, sizeof message);
      throw Error(ErrorCode::kInvalidValue, fmt::format("the regex '{}' does not compile (PCRE2, at offset {}): {}", pattern,
                                                        offset, reinterpret_cast<const char*>(message)));
    }
    jit_ = pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE) == 0;
  }
  ~Pcre2Regex() override { pcre2_code_free(code_); }
  Pcre2Regex(const Pcre2Regex&) = delete;
  Pcre2Regex& operator=(const Pcre2Regex&) = delete;

  bool search(std::string_view text, std::size_t from, std::size_t& begin, std::size_t& end) const override {
    thread_local MatchData data;
    // The text was checked as UTF-8 once, on entry to encode().
    const int rc = (jit_ ? pcre2_jit_match : pcre2_match)(code_, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), from,
                                                          PCRE2_NO_UTF_CHECK, data.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) return false;
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof message);
      throw Error(ErrorCode::kInternal, fmt::format("PCRE2 match failed: {}", reinterpret_cast<const char*>(message)));
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data.get());
    begin = ov[0];
    end = ov[1];
    return true;
  }

 private:
  struct MatchData {
    pcre2_match_data* md = pcre2_match_data_create(1, nullptr);
    ~MatchData() { pcre2_match_data_free(md); }
    pcre2_match_data* get() { return md; }
  };
  pcre2_code* code_ = nullptr;
  bool jit_ = false;
};

class NativeTextBackend final : public tokenizer::TextBackend {
 public:
  std::unique_ptr<CompiledRegex> compile(const std::string& pattern) const override {
    return std::make_unique<Pcre2Regex>(pattern);
  }
  std::string normalize(std::string_view utf8, NormalForm form) const override {
    if (utf8.empty()) return {};
    int options = UTF8PROC_STABLE;
    switch (form) {
      case NormalForm::kNFC: options |= UTF8PROC_COMPOSE; break;
      case NormalForm::kNFD: options |= UTF8PROC_DECOMPOSE; break;
      case NormalForm::kNFKC: options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
      case NormalForm::kNFKD: options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT; break;
    }
    utf8proc_uint8_t* out = nullptr;
    const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(utf8.data()),
                                            static_cast<utf8proc_ssize_t>(utf8.size()), &out,
                                            static_cast<utf8proc_option_t>(options));
    if (n < 0) throw Error(ErrorCode::kInternal, fmt::format("utf8proc: {}", utf8proc_errmsg(n)));
    std::string result(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
    std::free(out);
    return result;
  }
  CharCategory category(char32_t c) const override {
    return static_cast<CharCategory>(utf8proc_category(static_cast<utf8proc_int32_t>(c)));
  }
  char32_t simple_lowercase(char32_t c) const override {
    return static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
  }
  std::size_t grapheme_end(std::string_view utf8, std::size_t from) const override {
    // utf8proc's stateful break test carries the state extended grapheme clusters need (emoji
    // ZWJ sequences, regional-indicator pairs) from one pair of code points to the next.
    utf8proc_int32_t state = 0, previous = -1;
    std::size_t at = from;
    while (at < utf8.size()) {
      utf8proc_int32_t c = 0;
      const utf8proc_ssize_t n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(utf8.data() + at),
                                                  static_cast<utf8proc_ssize_t>(utf8.size() - at), &c);
      if (n <= 0) throw Error(ErrorCode::kInternal, fmt::format("grapheme_end: invalid UTF-8 at byte {}", at));
      if (previous >= 0 && utf8proc_grapheme_break_stateful(previous, c, &state)) break;
      previous = c;
      at += static_cast<std::size_t>(n);
    }
    return at;
  }
};

}  // namespace

std::shared_ptr<const tokenizer::TextBackend> native_text_backend() {
  static const std::shared_ptr<const tokenizer::TextBackend> backend = std::make_shared<NativeTextBackend>();
  return backend;
}

}  // namespace memfit::text
