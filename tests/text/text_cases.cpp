#include "text_cases.h"

#include "memfit/utf8.h"

namespace memfit::test {

const std::vector<NamedPattern>& real_tokenizer_patterns() {
  static const std::vector<NamedPattern> patterns = {
      {"gpt2", R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)"},
      {"llama3/cl100k", R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
      {"qwen2", R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
      {"o200k/llama4", R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
      {"tekken", R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
      {"deepseek-v3 digits", R"(\p{N}{1,3})"},
      {"deepseek-v3 cjk", R"([一-龥぀-ゟ゠-ヿ]+)"},
      {"deepseek-v3 main", R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
      {"deepseek-llm punct", R"(\s?[!-/:-~！-／：-～‘-‟　-。]+)"},
      {"deepseek-llm cjk", R"([一-龥ࠀ-一가-퟿]+)"},
      {"starcoder/falcon digits", R"(\p{N})"},
      {"normalizer replace", R"( {2,})"},
  };
  return patterns;
}

namespace {

// mulberry32, as tests/web/tokenizer-oracle.test.mjs.
struct Rng {
  std::uint32_t a;
  double next() {
    a += 0x6d2b79f5u;
    std::uint32_t t = a;
    t = (t ^ (t >> 15)) * (t | 1u);
    t ^= t + (t ^ (t >> 7)) * (t | 61u);
    return static_cast<double>(t ^ (t >> 14)) / 4294967296.0;
  }
  template <typename T>
  const T& pick(const std::vector<T>& v) { return v[static_cast<std::size_t>(next() * static_cast<double>(v.size()))]; }
};

// Code point ranges assigned by Unicode 6 (utf8proc's and PCRE2's tables here are newer), as
// the oracle test's.
const std::vector<std::pair<char32_t, char32_t>> kRanges = {
    {0x20, 0x7e}, {0xa0, 0x24f}, {0x300, 0x36f}, {0x370, 0x3ff}, {0x400, 0x4ff}, {0x590, 0x5ff}, {0x600, 0x6ff},
    {0x900, 0x97f}, {0xe00, 0xe5b}, {0x1100, 0x11ff}, {0x1e00, 0x1eff}, {0x2000, 0x206f}, {0x20a0, 0x20bf},
    {0x2100, 0x214f}, {0x2190, 0x23ff}, {0x2460, 0x24ff}, {0x2500, 0x27bf}, {0x3000, 0x303f}, {0x3040, 0x30ff},
    {0x4e00, 0x9fa5}, {0xac00, 0xd7a3}, {0xf900, 0xfa2d}, {0xfb00, 0xfb06}, {0xfe30, 0xfe4f}, {0xff01, 0xff5e},
    {0x1d400, 0x1d7ff}, {0x1f300, 0x1f5ff}, {0x1f600, 0x1f64f}, {0x20000, 0x2a6d6},
};
const std::vector<std::string> kWords = {
    "the", "Hello", "world", "don't", "it's", "we'll", "I'M", "they've", "naïve", "café", "straße", "İstanbul",
    "ΟΔΥΣΣΕΥΣ", "ﬁne", "Ｆｕｌｌ", "①②", "x²", "e\u0301", "n\u0303o", "a\u0323\u0302", "\u1100\u1161\u11a8",
    "👨‍👩‍👧", "👍🏽", "你好", "世界", "こんにちは", "안녕하세요", "Привет", "مرحبا", "नमस्ते", "'S", "'ſ", "ǅ", "/path/x",
    "(x)", "...", "—", "«»"};
const std::vector<std::string> kSpaces = {" ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n ", "\u00a0", "\u3000",
                                          "\u0085", "\u2028", "\u200b", "\u000b", "\u180e"};
const std::vector<std::string> kDigits = {"0", "7", "42", "123", "2024", "3.14159", "1,000,000", "-17", "٣٤", "１２"};

}  // namespace

std::vector<std::string> generated_texts(std::uint32_t seed, int count) {
  Rng rng{seed};
  std::vector<std::string> out;
  for (int t = 0; t < count; ++t) {
    std::string s;
    const int parts = 1 + static_cast<int>(rng.next() * 12);
    for (int i = 0; i < parts; ++i) {
      const double r = rng.next();
      if (r < 0.35) s += rng.pick(kWords);
      else if (r < 0.5) s += rng.pick(kSpaces);
      else if (r < 0.6) s += rng.pick(kDigits);
      else {
        const int len = 1 + static_cast<int>(rng.next() * 6);
        for (int k = 0; k < len; ++k) {
          const auto [lo, hi] = rng.pick(kRanges);
          memfit::append_utf8(s, lo + static_cast<char32_t>(rng.next() * static_cast<double>(hi - lo + 1)));
        }
      }
      if (rng.next() < 0.5) s += ' ';
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace memfit::test
