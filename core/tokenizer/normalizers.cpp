// Normalizers: `tokenizers`' normalizers/ (unicode.rs, utils.rs, strip.rs, prepend.rs, replace.rs,
// bert.rs, byte_level.rs, precompiled.rs), on the whole normalized string.
#include <fmt/format.h>

#include "memfit/format/base64.h"
#include "memfit/tokenizer/precompiled_charsmap.h"

#include "byte_level.h"
#include "json_fields.h"
#include "pattern.h"

namespace memfit::tokenizer {
namespace {

class Unicode final : public Normalizer {
 public:
  Unicode(const BuildContext& ctx, NormalForm form) : backend_(ctx.backend), form_(form) {}
  void normalize(std::string& s) const override { s = backend_->normalize(s, form_); }

 private:
  std::shared_ptr<const TextBackend> backend_;
  NormalForm form_;
};

// Rust's char::to_lowercase: the simple mapping, except İ (U+0130), whose lowercase is two
// code points ("i̇"), the one unconditional multi-character lowercase in SpecialCasing.txt.
void append_lowercase(const TextBackend& backend, char32_t c, std::string& out) {
  if (c < 0x80) {
    out += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  } else if (c == 0x130) {
    out += "i\xCC\x87";
  } else {
    append_utf8(out, backend.simple_lowercase(c));
  }
}

class Lowercase final : public Normalizer {
 public:
  explicit Lowercase(const BuildContext& ctx) : backend_(ctx.backend) {}
  void normalize(std::string& s) const override {
    s = map_chars(s, [&](char32_t c, std::string& out) { append_lowercase(*backend_, c, out); });
  }

 private:
  std::shared_ptr<const TextBackend> backend_;
};

class Strip final : public Normalizer {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  void normalize(std::string& s) const override {
    std::size_t b = 0, e = s.size();
    if (left_) {
      while (b < e) {
        std::size_t n = 0;
        if (!is_white_space(decode_utf8(s, b, &n))) break;
        b += n;
      }
    }
    if (right_) {
      while (e > b) {
        std::size_t start = e - 1;
        while (start > b && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
        std::size_t n = 0;
        if (!is_white_space(decode_utf8(s, start, &n))) break;
        e = start;
      }
    }
    s = s.substr(b, e - b);
  }

 private:
  bool left_, right_;
};

class StripAccents final : public Normalizer {
 public:
  explicit StripAccents(const BuildContext& ctx) : classes_{ctx.backend.get()}, backend_(ctx.backend) {}
  void normalize(std::string& s) const override {
    // unicode_normalization's is_combining_mark: any Mark (Mn, Mc, Me).
    s = map_chars(s, [&](char32_t c, std::string& out) {
      if (!classes_.is_mark(c)) append_utf8(out, c);
    });
  }

 private:
  CharClasses classes_;
  std::shared_ptr<const TextBackend> backend_;
};

class Prepend final : public Normalizer {
 public:
  explicit Prepend(std::string prefix) : prefix_(std::move(prefix)) {}
  void normalize(std::string& s) const override {
    if (!s.empty()) s.insert(0, prefix_);
  }

 private:
  std::string prefix_;
};

class Replace final : public Normalizer {
 public:
  Replace(Pattern pattern, std::string content) : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void normalize(std::string& s) const override { s = replace_all(s, pattern_, content_); }

 private:
  Pattern pattern_;
  std::string content_;
};

bool is_chinese_char(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

class Bert final : public Normalizer {
 public:
  Bert(const json& j, const BuildContext& ctx)
      : clean_text_(bool_or(j, "clean_text", true, ctx)),
        chinese_(bool_or(j, "handle_chinese_chars", true, ctx)),
        lowercase_(bool_or(j, "lowercase", true, ctx)),
        classes_{ctx.backend.get()},
        backend_(ctx.backend) {
    strip_accents_ = bool_or(j, "strip_accents", lowercase_, ctx);
  }
  void normalize(std::string& s) const override {
    if (clean_text_) {
      s = map_chars(s, [&](char32_t c, std::string& out) {
        // Controls go first (a vertical tab is removed, not made a space), then whitespace
        // becomes ' '. unicode_categories' is_other: Cc Cf Cs Co (its tables predate most
        // assignments, so an unassigned code point is kept, as the oracle shows).
        const CharCategory k = classes_.category(c);
        const bool control = c != '\t' && c != '\n' && c != '\r' &&
                             (k == CharCategory::kCc || k == CharCategory::kCf || k == CharCategory::kCs || k == CharCategory::kCo);
        if (c == 0 || c == 0xFFFD || control) return;
        if (is_white_space(c)) { out += ' '; return; }
        append_utf8(out, c);
      });
    }
    if (chinese_) {
      s = map_chars(s, [&](char32_t c, std::string& out) {
        if (is_chinese_char(c)) { out += ' '; append_utf8(out, c); out += ' '; }
        else append_utf8(out, c);
      });
    }
    if (strip_accents_) {
      s = map_chars(backend_->normalize(s, NormalForm::kNFD), [&](char32_t c, std::string& out) {
        if (classes_.category(c) != CharCategory::kMn) append_utf8(out, c);
      });
    }
    if (lowercase_) s = map_chars(s, [&](char32_t c, std::string& out) { append_lowercase(*backend_, c, out); });
  }

 private:
  bool clean_text_, chinese_, lowercase_, strip_accents_ = false;
  CharClasses classes_;
  std::shared_ptr<const TextBackend> backend_;
};

class ByteLevelNormalizer final : public Normalizer {
 public:
  void normalize(std::string& s) const override { s = bytes_to_chars(s); }
};

PrecompiledCharsmap read_charsmap(const json& j, const BuildContext& ctx) {
  const json& text = field(j, "precompiled_charsmap", ctx);
  const BuildContext at = ctx.at("precompiled_charsmap");
  if (!text.is_string()) at.fail(ErrorCode::kWrongType, fmt::format("must be a base64 string, got {}", json_type_name(text)));
  const auto blob = base64_decode(text.get_ref<const std::string&>(), "precompiled_charsmap");
  if (!blob.ok()) at.fail(ErrorCode::kInvalidValue, "is not base64 (RFC 4648, with padding)");
  auto charsmap = PrecompiledCharsmap::parse(*blob);
  if (!charsmap.ok()) at.fail(charsmap.error().code(), charsmap.error().message());
  return std::move(charsmap).value();
}

// SentencePiece's rules (`tokenizers`' normalizers/precompiled.rs over spm_precompiled 0.1.4's
// normalize_string): each extended grapheme cluster under 6 bytes is looked up whole, and the
// replacement of its shortest matching prefix stands for the whole cluster; longer clusters, and
// clusters with no match, are looked up one character at a time (a character without a match is
// kept). The crate's authors keep this odd rule because it is what matches sentencepiece's
// outputs on XNLI for the models converted from it.
// With "memfit_longest_match": true (no tokenizers file has it; memfit's tokenizer.model
// converter sets it) the rules apply as sentencepiece itself applies them: at each position the
// longest matching prefix, else one character kept (Normalizer::NormalizePrefix).
class Precompiled final : public Normalizer {
 public:
  Precompiled(const json& j, const BuildContext& ctx)
      : charsmap_(read_charsmap(j, ctx)), backend_(ctx.backend), longest_match_(bool_or(j, "memfit_longest_match", false, ctx)) {}
  void normalize(std::string& s) const override {
    if (longest_match_) return normalize_longest(s);
    std::string out;
    out.reserve(s.size());
    const std::string_view text(s);
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t end = backend_->grapheme_end(text, at);
      const std::string_view grapheme = text.substr(at, end - at);
      at = end;
      if (grapheme.size() < 6) {
        if (const auto norm = charsmap_.transform(grapheme)) {
          out += *norm;
          continue;
        }
      }
      for (std::size_t i = 0; i < grapheme.size();) {
        std::size_t n = 0;
        decode_utf8(grapheme, i, &n);
        const std::string_view part = grapheme.substr(i, n);
        if (const auto norm = charsmap_.transform(part)) out += *norm;
        else out += part;
        i += n;
      }
    }
    s = std::move(out);
  }

 private:
  void normalize_longest(std::string& s) const {
    std::string out;
    out.reserve(s.size());
    const std::string_view text(s);
    for (std::size_t at = 0; at < text.size();) {
      std::string_view replacement;
      std::size_t n = charsmap_.longest_match(text.substr(at), replacement);
      if (n > 0) {
        out += replacement;
      } else {
        decode_utf8(text, at, &n);
        out.append(text, at, n);
      }
      at += n;
    }
    s = std::move(out);
  }

  PrecompiledCharsmap charsmap_;
  std::shared_ptr<const TextBackend> backend_;
  bool longest_match_;
};

class Sequence final : public Normalizer {
 public:
  Sequence(const json& j, const BuildContext& ctx) : parts_(make_list(j, "normalizers", ctx, make_normalizer)) {}
  void normalize(std::string& s) const override {
    for (const auto& n : parts_) n->normalize(s);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> parts_;
};

template <NormalForm F>
std::unique_ptr<Normalizer> unicode(const json&, const BuildContext& ctx) { return std::make_unique<Unicode>(ctx, F); }

const Factory<Normalizer> kNormalizers[] = {
    {"NFC", unicode<NormalForm::kNFC>},
    {"NFD", unicode<NormalForm::kNFD>},
    {"NFKC", unicode<NormalForm::kNFKC>},
    {"NFKD", unicode<NormalForm::kNFKD>},
    {"Lowercase", [](const json&, const BuildContext& ctx) -> std::unique_ptr<Normalizer> { return std::make_unique<Lowercase>(ctx); }},
    {"Strip", [](const json& j, const BuildContext& ctx) -> std::unique_ptr<Normalizer> {
       return std::make_unique<Strip>(bool_or(j, "strip_left", true, ctx), bool_or(j, "strip_right", true, ctx));
     }},
    {"StripAccents", [](const json&, const BuildContext& ctx) -> std::unique_ptr<Normalizer> { return std::make_unique<StripAccents>(ctx); }},
    {"Prepend", [](const json& j, const BuildContext& ctx) -> std::unique_ptr<Normalizer> {
       return std::make_unique<Prepend>(string_field(j, "prepend", ctx));
     }},
    {"Replace", [](const json& j, const BuildContext& ctx) -> std::unique_ptr<Normalizer> {
       return std::make_unique<Replace>(Pattern::from_json(field(j, "pattern", ctx), ctx.at("pattern")),
                                        string_field(j, "content", ctx));
     }},
    {"BertNormalizer", [](const json& j, const BuildContext& ctx) -> std::unique_ptr<Normalizer> { return std::make_unique<Bert>(j, ctx); }},
    {"ByteLevel", [](const json&, const BuildContext&) -> std::unique_ptr<Normalizer> { return std::make_unique<ByteLevelNormalizer>(); }},
    {"Sequence", [](const json& j, const BuildContext& ctx) -> std::unique_ptr<Normalizer> { return std::make_unique<Sequence>(j, ctx); }},
    {"Precompiled", [](const json& j, const BuildContext& ctx) -> std::unique_ptr<Normalizer> { return std::make_unique<Precompiled>(j, ctx); }},
};

}  // namespace

std::unique_ptr<Normalizer> make_normalizer(const json& j, const BuildContext& ctx) {
  return make_by_type(j, ctx, kNormalizers, "normalizer");
}

}  // namespace memfit::tokenizer
