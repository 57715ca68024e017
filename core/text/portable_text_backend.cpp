#include "memfit/text/portable_text_backend.h"

#include "grapheme.h"
#include "normalize.h"
#include "regex.h"
#include "unicode_data.h"

namespace memfit::text {
namespace {

using tokenizer::CharCategory;
using tokenizer::CompiledRegex;
using tokenizer::NormalForm;

class PortableRegex final : public CompiledRegex {
 public:
  explicit PortableRegex(const std::string& pattern) : program_(regex::compile(pattern)) {}
  bool search(std::string_view text, std::size_t from, std::size_t& begin, std::size_t& end) const override {
    return regex::search(program_, text, from, begin, end);
  }

 private:
  regex::Program program_;
};

class PortableTextBackend final : public tokenizer::TextBackend {
 public:
  std::unique_ptr<CompiledRegex> compile(const std::string& pattern) const override {
    return std::make_unique<PortableRegex>(pattern);
  }
  std::string normalize(std::string_view utf8, NormalForm form) const override { return normalize_utf8(utf8, form); }
  CharCategory category(char32_t c) const override { return general_category(c); }
  char32_t simple_lowercase(char32_t c) const override { return text::simple_lowercase(c); }
  std::size_t grapheme_end(std::string_view utf8, std::size_t from) const override {
    return text::grapheme_end(utf8, from);
  }
};

}  // namespace

std::shared_ptr<const tokenizer::TextBackend> portable_text_backend() {
  static const std::shared_ptr<const tokenizer::TextBackend> backend = std::make_shared<PortableTextBackend>();
  return backend;
}

const char* portable_unicode_version() { return unicode_version(); }

}  // namespace memfit::text
