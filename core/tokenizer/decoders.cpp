// Decoders: `tokenizers`' decoders/ (byte_fallback.rs, fuse.rs, strip.rs, wordpiece.rs, bpe.rs,
// sequence.rs), pre_tokenizers/byte_level.rs and metaspace.rs, normalizers/replace.rs.
#include <fmt/format.h>

#include "byte_level.h"
#include "json_fields.h"
#include "pattern.h"

namespace memfit::tokenizer {
namespace {

class ByteLevel final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const std::string& t : tokens) {
      const std::size_t mark = bytes.size();
      bool all = true;
      for (std::size_t i = 0; i < t.size() && all;) {
        std::size_t n = 0;
        const int b = char_to_byte(decode_utf8(t, i, &n));
        if (b < 0) all = false;
        else bytes += static_cast<char>(b);
        i += n;
      }
      if (!all) bytes.replace(mark, std::string::npos, t);  // a token that is not byte-level: as is
    }
    tokens = {utf8_lossy(bytes)};
  }
};

class Metaspace final : public Decoder {
 public:
  Metaspace(const json& j, const BuildContext& ctx) : replacement_(string_or(j, "replacement", "\xE2\x96\x81", ctx)) {
    if (has_field(j, "prepend_scheme")) prepend_ = string_field(j, "prepend_scheme", ctx) != "never";
    else prepend_ = bool_or(j, "add_prefix_space", true, ctx);
  }
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      // Every replacement becomes a space, except in the first token, where they go (metaspace.rs).
      tokens[i] = replace_all(tokens[i], Pattern::literal(replacement_), i == 0 && prepend_ ? "" : " ");
    }
  }

 private:
  std::string replacement_;
  bool prepend_ = true;
};

// "<0xAB>" → the byte 0xAB (u8::from_str_radix on the two characters after "<0x").
std::optional<unsigned char> fallback_byte(const std::string& t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return std::nullopt;
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (t[3] == '+' && hex(t[4]) >= 0) return static_cast<unsigned char>(hex(t[4]));
  const int hi = hex(t[3]), lo = hex(t[4]);
  if (hi < 0 || lo < 0) return std::nullopt;
  return static_cast<unsigned char>(hi * 16 + lo);
}

class ByteFallback final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string bytes;
    const auto flush = [&] {
      if (bytes.empty()) return;
      if (invalid_utf8_at(bytes) == std::string::npos) out.push_back(bytes);
      else for (std::size_t i = 0; i < bytes.size(); ++i) out.emplace_back("\xEF\xBF\xBD");
      bytes.clear();
    };
    for (std::string& t : tokens) {
      if (const auto b = fallback_byte(t)) {
        bytes += static_cast<char>(*b);
        continue;
      }
      flush();
      out.push_back(std::move(t));
    }
    flush();
    tokens = std::move(out);
  }
};

class Fuse final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const std::string& t : tokens) all += t;
    tokens = {all};
  }
};

class Strip final : public Decoder {
 public:
  Strip(const json& j, const BuildContext& ctx)
      : start_(uint_or(j, "start", 0, ctx)), stop_(uint_or(j, "stop", 0, ctx)) {
    const std::string content = string_field(j, "content", ctx);
    std::size_t n = 0;
    if (content.empty() || (decode_utf8(content, 0, &n), n != content.size()))
      ctx.at("content").fail(ErrorCode::kInvalidValue, fmt::format("must be one character, got '{}'", content));
    content_ = decode_utf8(content, 0, &n);
  }
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) {
      std::vector<char32_t> chars;
      for (std::size_t i = 0; i < t.size();) {
        std::size_t n = 0;
        chars.push_back(decode_utf8(t, i, &n));
        i += n;
      }
      std::size_t start_cut = 0;
      for (std::size_t i = 0; i < chars.size() && i < start_; ++i) {
        if (chars[i] != content_) break;
        start_cut = i + 1;
      }
      std::size_t stop_cut = chars.size();
      for (std::size_t i = 0; i < stop_ && i < chars.size(); ++i) {
        const std::size_t index = chars.size() - i - 1;
        if (chars[index] != content_) break;
        stop_cut = index;
      }
      std::string out;
      for (std::size_t i = start_cut; i < std::max(start_cut, stop_cut); ++i) append_utf8(out, chars[i]);
      t = std::move(out);
    }
  }

 private:
  std::uint64_t start_, stop_;
  char32_t content_ = ' ';
};

class Replace final : public Decoder {
 public:
  Replace(const json& j, const BuildContext& ctx)
      : pattern_(Pattern::from_json(field(j, "pattern", ctx), ctx.at("pattern"))), content_(string_field(j, "content", ctx)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) t = replace_all(t, pattern_, content_);
  }

 private:
  Pattern pattern_;
  std::string content_;
};

std::string wordpiece_cleanup(std::string s) {
  static const std::pair<const char*, const char*> kRules[] = {
      {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
      {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"},
  };
  for (const auto& [from, to] : kRules) s = replace_all(s, Pattern::literal(from), to);
  return s;
}

class WordPiece final : public Decoder {
 public:
  WordPiece(const json& j, const BuildContext& ctx)
      : prefix_(string_or(j, "prefix", "##", ctx)), cleanup_(bool_or(j, "cleanup", true, ctx)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      std::string& t = tokens[i];
      if (i != 0) {
        if (t.compare(0, prefix_.size(), prefix_) == 0) t.erase(0, prefix_.size());
        else t.insert(0, " ");
      }
      if (cleanup_) t = wordpiece_cleanup(std::move(t));
    }
  }

 private:
  std::string prefix_;
  bool cleanup_;
};

class BpeDecoder final : public Decoder {
 public:
  BpeDecoder(const json& j, const BuildContext& ctx) : suffix_(string_or(j, "suffix", "</w>", ctx)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i)
      tokens[i] = replace_all(tokens[i], Pattern::literal(suffix_), i + 1 == tokens.size() ? "" : " ");
  }

 private:
  std::string suffix_;
};

class Sequence final : public Decoder {
 public:
  Sequence(const json& j, const BuildContext& ctx) : parts_(make_list(j, "decoders", ctx, make_decoder)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (const auto& d : parts_) d->decode_chain(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> parts_;
};

template <typename T>
std::unique_ptr<Decoder> plain(const json&, const BuildContext&) { return std::make_unique<T>(); }
template <typename T>
std::unique_ptr<Decoder> configured(const json& j, const BuildContext& ctx) { return std::make_unique<T>(j, ctx); }

const Factory<Decoder> kDecoders[] = {
    {"ByteLevel", plain<ByteLevel>},
    {"Metaspace", configured<Metaspace>},
    {"ByteFallback", plain<ByteFallback>},
    {"Fuse", plain<Fuse>},
    {"Strip", configured<Strip>},
    {"Replace", configured<Replace>},
    {"WordPiece", configured<WordPiece>},
    {"BPEDecoder", configured<BpeDecoder>},
    {"Sequence", configured<Sequence>},
};

}  // namespace

std::unique_ptr<Decoder> make_decoder(const json& j, const BuildContext& ctx) {
  return make_by_type(j, ctx, kDecoders, "decoder");
}

}  // namespace memfit::tokenizer
