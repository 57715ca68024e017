// Pre-tokenizers: `tokenizers`' pre_tokenizers/ (byte_level.rs, split.rs, metaspace.rs, digits.rs,
// whitespace.rs, punctuation.rs, bert.rs, delimiter.rs, sequence.rs).
#include <fmt/format.h>

#include "byte_level.h"
#include "json_fields.h"
#include "pattern.h"

namespace memfit::tokenizer {
namespace {

class ByteLevel final : public PreTokenizer {
 public:
  ByteLevel(const json& j, const BuildContext& ctx)
      : add_prefix_space_(bool_or(j, "add_prefix_space", true, ctx)),
        use_regex_(bool_or(j, "use_regex", true, ctx)) {
    if (use_regex_) regex_ = Pattern::regex(kGpt2Pattern, *ctx.backend);
  }
  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [&](Split& s) {
      if (add_prefix_space_ && (s.text.empty() || s.text[0] != ' ')) {
        s.text.insert(0, " ");
        if (s.origin_len > 0) ++s.origin_len;  // prepended characters align with the first
      }
      if (!use_regex_) return std::vector<Range>{{0, s.text.size()}};
      return split_ranges(regex_.pieces(s.text), SplitBehavior::kIsolated);
    });
    for (Split& s : splits)
      if (!s.added) s.text = bytes_to_chars(s.text);
  }

 private:
  bool add_prefix_space_, use_regex_;
  Pattern regex_;
};

class SplitPre final : public PreTokenizer {
 public:
  SplitPre(const json& j, const BuildContext& ctx)
      : pattern_(Pattern::from_json(field(j, "pattern", ctx), ctx.at("pattern"))),
        behavior_(split_behavior(field(j, "behavior", ctx), ctx.at("behavior"))),
        invert_(bool_or(j, "invert", false, ctx)) {}
  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [&](const Split& s) {
      auto pieces = pattern_.pieces(s.text);
      if (invert_)
        for (auto& p : pieces) p.second = !p.second;
      return split_ranges(std::move(pieces), behavior_);
    });
  }

 private:
  Pattern pattern_;
  SplitBehavior behavior_;
  bool invert_;
};

enum class PrependScheme { kFirst, kAlways, kNever };

PrependScheme prepend_scheme(const json& j, const BuildContext& ctx) {
  if (!has_field(j, "prepend_scheme")) {
    // Files from before prepend_scheme: add_prefix_space true → always, false → never.
    return bool_or(j, "add_prefix_space", true, ctx) ? PrependScheme::kAlways : PrependScheme::kNever;
  }
  const std::string s = string_field(j, "prepend_scheme", ctx);
  if (s == "first") return PrependScheme::kFirst;
  if (s == "always") return PrependScheme::kAlways;
  if (s == "never") return PrependScheme::kNever;
  ctx.at("prepend_scheme").fail(ErrorCode::kInvalidValue, fmt::format("must be first, always or never; got '{}'", s));
}

char32_t single_char(const std::string& s, const BuildContext& ctx, const char* key) {
  std::size_t n = 0;
  if (s.empty() || (decode_utf8(s, 0, &n), n != s.size()))
    ctx.at(key).fail(ErrorCode::kInvalidValue, fmt::format("must be one character, got '{}'", s));
  return decode_utf8(s, 0, &n);
}

class Metaspace final : public PreTokenizer {
 public:
  Metaspace(const json& j, const BuildContext& ctx)
      : replacement_(string_or(j, "replacement", "\xE2\x96\x81", ctx)),
        scheme_(prepend_scheme(j, ctx)),
        split_(bool_or(j, "split", true, ctx)) {
    single_char(replacement_, ctx, "replacement");
  }
  void pre_tokenize(std::vector<Split>& splits) const override {
    const Pattern space = Pattern::literal(" ");
    const Pattern rep = Pattern::literal(replacement_);
    split_each(splits, [&](Split& s) {
      s.text = replace_all(s.text, space, replacement_);
      const bool starts = s.text.compare(0, replacement_.size(), replacement_) == 0;
      if (!starts && (scheme_ == PrependScheme::kAlways || (scheme_ == PrependScheme::kFirst && s.origin_len > 0)))
        s.text.insert(0, replacement_);
      if (!split_) return std::vector<Range>{{0, s.text.size()}};
      return split_ranges(rep.pieces(s.text), SplitBehavior::kMergedWithNext);
    });
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

// Splits on the characters `pred` accepts, with `behavior`.
template <typename Pred>
class CharSplit final : public PreTokenizer {
 public:
  CharSplit(Pred pred, SplitBehavior behavior) : pred_(std::move(pred)), behavior_(behavior) {}
  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [&](const Split& s) { return split_ranges(char_pieces(s.text, pred_), behavior_); });
  }

 private:
  Pred pred_;
  SplitBehavior behavior_;
};
template <typename Pred>
std::unique_ptr<PreTokenizer> char_split(Pred pred, SplitBehavior behavior) {
  return std::make_unique<CharSplit<Pred>>(std::move(pred), behavior);
}

bool is_ascii_punctuation(char32_t c) {
  return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
}

// Whitespace: the regex `\w+|[^\w\s]+` (regex crate), matches kept, the rest removed.
class Whitespace final : public PreTokenizer {
 public:
  explicit Whitespace(const BuildContext& ctx) : classes_{ctx.backend.get()}, backend_(ctx.backend) {}
  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [&](const Split& s) {
      std::vector<Range> out;
      int run = 0;  // 1: word characters, 2: other non-space characters
      std::size_t start = 0;
      for (std::size_t i = 0; i < s.text.size();) {
        std::size_t n = 0;
        const char32_t c = decode_utf8(s.text, i, &n);
        const int kind = classes_.is_word(c) ? 1 : is_white_space(c) ? 0 : 2;
        if (kind != run) {
          if (run != 0) out.push_back({start, i});
          start = i;
          run = kind;
        }
        i += n;
      }
      if (run != 0) out.push_back({start, s.text.size()});
      return out;
    });
  }

 private:
  CharClasses classes_;
  std::shared_ptr<const TextBackend> backend_;
};

class Sequence final : public PreTokenizer {
 public:
  Sequence(const json& j, const BuildContext& ctx) : parts_(make_list(j, "pretokenizers", ctx, make_pre_tokenizer)) {}
  void pre_tokenize(std::vector<Split>& splits) const override {
    for (const auto& p : parts_) p->pre_tokenize(splits);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> parts_;
};

class Bert final : public PreTokenizer {
 public:
  explicit Bert(const BuildContext& ctx) : classes_{ctx.backend.get()}, backend_(ctx.backend) {}
  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [&](const Split& s) { return split_ranges(char_pieces(s.text, is_white_space), SplitBehavior::kRemoved); });
    split_each(splits, [&](const Split& s) {
      return split_ranges(char_pieces(s.text, [&](char32_t c) { return is_ascii_punctuation(c) || classes_.is_punctuation(c); }),
                          SplitBehavior::kIsolated);
    });
  }

 private:
  CharClasses classes_;
  std::shared_ptr<const TextBackend> backend_;
};

std::unique_ptr<PreTokenizer> punctuation(const json& j, const BuildContext& ctx) {
  const SplitBehavior behavior = has_field(j, "behavior") ? split_behavior(j["behavior"], ctx.at("behavior")) : SplitBehavior::kIsolated;
  const CharClasses classes{ctx.backend.get()};
  auto keep = ctx.backend;  // the classes point into it
  return char_split([classes, keep](char32_t c) { return is_ascii_punctuation(c) || classes.is_punctuation(c); }, behavior);
}

std::unique_ptr<PreTokenizer> digits(const json& j, const BuildContext& ctx) {
  const CharClasses classes{ctx.backend.get()};
  auto keep = ctx.backend;
  return char_split([classes, keep](char32_t c) { return classes.is_numeric(c); },
                    bool_or(j, "individual_digits", false, ctx) ? SplitBehavior::kIsolated : SplitBehavior::kContiguous);
}

const Factory<PreTokenizer> kPreTokenizers[] = {
    {"ByteLevel", [](const json& j, const BuildContext& ctx) -> std::unique_ptr<PreTokenizer> { return std::make_unique<ByteLevel>(j, ctx); }},
    {"Split", [](const json& j, const BuildContext& ctx) -> std::unique_ptr<PreTokenizer> { return std::make_unique<SplitPre>(j, ctx); }},
    {"Metaspace", [](const json& j, const BuildContext& ctx) -> std::unique_ptr<PreTokenizer> { return std::make_unique<Metaspace>(j, ctx); }},
    {"Digits", digits},
    {"Whitespace", [](const json&, const BuildContext& ctx) -> std::unique_ptr<PreTokenizer> { return std::make_unique<Whitespace>(ctx); }},
    {"WhitespaceSplit", [](const json&, const BuildContext&) { return char_split(is_white_space, SplitBehavior::kRemoved); }},
    {"Punctuation", punctuation},
    {"BertPreTokenizer", [](const json&, const BuildContext& ctx) -> std::unique_ptr<PreTokenizer> { return std::make_unique<Bert>(ctx); }},
    {"CharDelimiterSplit", [](const json& j, const BuildContext& ctx) {
       const char32_t d = single_char(string_field(j, "delimiter", ctx), ctx, "delimiter");
       return char_split([d](char32_t c) { return c == d; }, SplitBehavior::kRemoved);
     }},
    {"Sequence", [](const json& j, const BuildContext& ctx) -> std::unique_ptr<PreTokenizer> { return std::make_unique<Sequence>(j, ctx); }},
};

}  // namespace

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const json& j, const BuildContext& ctx) {
  return make_by_type(j, ctx, kPreTokenizers, "pre-tokenizer");
}

}  // namespace memfit::tokenizer
