// The portable TextBackend (core/text: its own regex engine and generated Unicode tables, what the
// page's text module runs) against the native one (PCRE2 + utf8proc) on every code point and on
// the patterns of real tokenizer.json files over generated text; and core's tokenizer over it
// against the golden tokenizations of the Rust `tokenizers` library.
//
// Unicode versions: the portable tables are Unicode 14.0 (Python's and Perl's data), Debian's
// utf8proc 2.8 is Unicode 15.0 (PCRE2 10.42's tables are 14.0), so the code points that one of
// them leaves unassigned (Cn) are skipped and counted; the count is bounded by what Unicode 15
// added, so that a broken table cannot hide behind the skip.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <vector>

#include "load_tokenizer.h"
#include "memfit/text/portable_text_backend.h"
#include "memfit/text/text_api.h"
#include "memfit/tokenizer/tokenizer.h"
#include "memfit/utf8.h"
#include "native_text_backend.h"
#include "support/reference.h"
#include "text/text_cases.h"

namespace {

using memfit::tokenizer::CharCategory;
using memfit::tokenizer::NormalForm;
using memfit::tokenizer::TextBackend;

const TextBackend& portable() { return *memfit::text::portable_text_backend(); }
const TextBackend& native() { return *memfit::text::native_text_backend(); }

// Characters Unicode 15.0 added (its release notes: 4,489).
constexpr int kNewInUnicode15 = 4489;

bool known_to_both(char32_t c) {
  return (c < 0xD800 || c > 0xDFFF) && native().category(c) != CharCategory::kCn &&
         portable().category(c) != CharCategory::kCn;
}

std::string utf8(char32_t c) {
  std::string s;
  memfit::append_utf8(s, c);
  return s;
}

// Every match of `re` in `text`, as Pattern::matches iterates (an empty match right after the
// previous one skipped).
std::vector<std::pair<std::size_t, std::size_t>> all_matches(const memfit::tokenizer::CompiledRegex& re, const std::string& text) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t from = 0;
  while (from <= text.size()) {
    std::size_t b = 0, e = 0;
    if (!re.search(text, from, b, e)) break;
    if (b == e && !out.empty() && out.back().second == e) {
      if (from >= text.size()) break;
      ++from;
      while (from < text.size() && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80) ++from;
      continue;
    }
    out.push_back({b, e});
    from = e;
  }
  return out;
}

}  // namespace

TEST_CASE("portable text: general category and simple lowercase of every code point equal utf8proc's") {
  CHECK(std::string(memfit::text::portable_unicode_version()) == "14.0.0");
  int compared = 0, skipped = 0;
  for (char32_t c = 0; c < 0x110000; ++c) {
    if (!known_to_both(c)) {
      if ((c < 0xD800 || c > 0xDFFF) && portable().category(c) != native().category(c)) ++skipped;
      continue;
    }
    CAPTURE(static_cast<std::uint32_t>(c));
    REQUIRE((portable().category(c) == native().category(c)));
    REQUIRE(portable().simple_lowercase(c) == native().simple_lowercase(c));
    ++compared;
  }
  MESSAGE("portable text: " << compared << " code points compared, " << skipped << " unassigned in one of the two skipped");
  CHECK(compared > 140000);
  CHECK(skipped <= kNewInUnicode15);
}

TEST_CASE("portable text: NFC, NFD, NFKC, NFKD of every code point and of combining sequences equal utf8proc's") {
  int compared = 0;
  for (char32_t c = 0; c < 0x110000; ++c) {
    if (!known_to_both(c)) continue;
    const std::string s = utf8(c);
    for (const NormalForm f : {NormalForm::kNFC, NormalForm::kNFD, NormalForm::kNFKC, NormalForm::kNFKD}) {
      CAPTURE(static_cast<std::uint32_t>(c));
      CAPTURE(static_cast<int>(f));
      REQUIRE(portable().normalize(s, f) == native().normalize(s, f));
      ++compared;
    }
  }
  // Sequences that reorder and recompose: bases with marks of several classes, Hangul jamo,
  // blocked and unblocked compositions.
  std::vector<std::string> texts = {"e\u0301\u0323", "a\u0323\u0302\u0301", "\u1100\u1161\u11a8", "\uac00\u11a8",
                                    "\u1100\u1161x", "o\u0308\u0304", "A\u030a\u0327", "\u0069\u0307", "\u1e9b\u0323",
                                    "\u0391\u0313\u0301\u0345", "\u05d0\u05b7\u05bc", "\u0928\u093c", "q\u0307\u0323",
                                    "\u00c5\u212b\u2126", "\u0f71\u0f72\u0f74", "\uff76\uff9e", "\u3131\u314f"};
  for (const std::string& t : memfit::test::generated_texts(7, 300)) texts.push_back(t);
  for (const std::string& t : texts)
    for (const NormalForm f : {NormalForm::kNFC, NormalForm::kNFD, NormalForm::kNFKC, NormalForm::kNFKD}) {
      CAPTURE(t);
      CAPTURE(static_cast<int>(f));
      CHECK(portable().normalize(t, f) == native().normalize(t, f));
      ++compared;
    }
  MESSAGE("portable text: " << compared << " normalizations compared");
}

TEST_CASE("portable regex: real tokenizer.json patterns find the same matches as PCRE2 on generated text") {
  const std::vector<std::string> texts = memfit::test::generated_texts(17, 400);
  int compared = 0;
  for (const auto& [name, pattern] : memfit::test::real_tokenizer_patterns()) {
    const auto ours = portable().compile(pattern);
    const auto theirs = native().compile(pattern);
    for (const std::string& t : texts) {
      CAPTURE(name);
      CAPTURE(t);
      REQUIRE(all_matches(*ours, t) == all_matches(*theirs, t));
      ++compared;
    }
  }
  MESSAGE("portable regex: " << compared << " pattern × text pairs compared");
  CHECK(compared >= 12 * 400);
}

TEST_CASE("portable regex: Oniguruma's meaning where PCRE2's differs") {
  using Matches = std::vector<std::pair<std::size_t, std::size_t>>;
  // $ is the end of a line (DeepSeek LLM's "\s+$"); PCRE2 without MULTILINE only ends the text.
  CHECK(all_matches(*portable().compile(R"(\s+$)"), "a  \nb ") == Matches{{1, 3}, {5, 6}});
  CHECK(all_matches(*portable().compile("^x"), "x\nx") == Matches{{0, 1}, {2, 3}});
  // A class inside a class is a union (BLOOM's " ?[^(\s|[.,!?…。，、।۔،])]+").
  CHECK(all_matches(*portable().compile(R"( ?[^(\s|[.,!?…。，、।۔،])]+)"), "Hi, you (there)!") ==
        Matches{{0, 2}, {3, 7}, {9, 14}});
  // Scripts are the Script property (PCRE2 uses Script_Extensions): 。 and 〆 are not Han.
  CHECK(all_matches(*portable().compile(R"(\p{Han})"), "a。〆々〇〡㐀x、") == Matches{{7, 10}, {10, 13}, {13, 16}, {16, 19}});
  // After an interval, '+' repeats again and '?' after {n} makes it optional.
  CHECK(all_matches(*portable().compile("a{1,2}+"), "aaaaa") == Matches{{0, 5}});
  CHECK(all_matches(*portable().compile("x{2}?"), "xxx") == Matches{{0, 2}, {3, 3}});
  // (?i:'s) matches 'S and 'ſ (U+017F folds to s); \h is a hexadecimal digit.
  CHECK(all_matches(*portable().compile("(?i:'s)"), "'S 'ſ 's") == Matches{{0, 2}, {3, 6}, {7, 9}});
  CHECK(all_matches(*portable().compile(R"(\h+)"), "cafe 12g") == Matches{{0, 4}, {5, 7}});
  // Lazy, possessive and counted repeats; lookahead.
  CHECK(all_matches(*portable().compile("a+?"), "aaa") == Matches{{0, 1}, {1, 2}, {2, 3}});
  CHECK(all_matches(*portable().compile("a++a"), "aaa").empty());
  CHECK(all_matches(*portable().compile("(?:ab){2,3}"), "abababababab") == Matches{{0, 6}, {6, 12}});
  CHECK(all_matches(*portable().compile(R"(\d(?=px))"), "1px 2em 3px") == Matches{{0, 1}, {8, 9}});
  CHECK(all_matches(*portable().compile(R"((a|)*b)"), "aab") == Matches{{0, 3}});
}

TEST_CASE("portable regex: syntax it does not support is an error naming the pattern and the construct") {
  const std::pair<const char*, const char*> cases[] = {
      {R"((?<=a)b)", "a lookbehind"},
      {R"((a)\1)", "the escape \\1"},
      {R"(\bword)", "the word boundary \\b"},
      {R"([[:alpha:]])", "a POSIX bracket"},
      {R"([a-z&&[^aeiou]])", "a class intersection"},
      {R"(\p{Foo})", "the property \\p{Foo}"},
      {R"((?x)a)", "the group option 'x'"},
      {R"((?i:é))", "case-insensitive matching of the non-ASCII letter U+00E9"},
      {R"(a{2000})", "a repeat count above 1000"},
      {R"((ab)", "an unterminated group"},
      {R"(*a)", "a quantifier with nothing to repeat"},
  };
  for (const auto& [pattern, construct] : cases) {
    CAPTURE(pattern);
    try {
      (void)portable().compile(pattern);
      FAIL("compiled");
    } catch (const memfit::Error& e) {
      CHECK((e.code() == memfit::ErrorCode::kInvalidValue));
      const std::string what = e.message();
      CHECK(what.find(std::string("the regex '") + pattern + "'") != std::string::npos);
      CHECK(what.find(construct) != std::string::npos);
    }
  }
}

TEST_CASE("portable regex: catastrophic backtracking stops with an error, not a hang") {
  const auto re = portable().compile("(a|a)*b");
  const std::string text(60, 'a');
  std::size_t b = 0, e = 0;
  try {
    (void)re->search(text, 0, b, e);
    FAIL("matched");
  } catch (const memfit::Error& err) {
    CHECK((err.code() == memfit::ErrorCode::kInvalidValue));
    CHECK(err.message().find("backtracks too much") != std::string::npos);
  }
  // A linear pattern over a long text stays within the bound.
  const std::string long_text = std::string(200000, ' ') + "x";
  CHECK(all_matches(*portable().compile(R"(\s+(?!\S)|\s+)"), long_text).size() == 2);
}

TEST_CASE("portable text: core's tokenizer over it matches the golden tokenizations and the native backend") {
  const auto ref = memfit::test::reference_dir();
  if (!ref) return memfit::test::skip_loudly("portable tokenizer golden (golden/tokenizers)");
  using nlohmann::json;
  int golden = 0, generated = 0;
  for (const char* name : {"gpt2", "llama3", "qwen3", "mistral"}) {
    const std::string dir = *ref + "/golden/tokenizers/" + name;
    const std::string text = memfit::test::read_text(dir + "/tokenizer.json");
    const auto ours = memfit::tokenizer::Tokenizer::from_json(text, memfit::text::portable_text_backend());
    REQUIRE(ours.ok());
    const auto theirs = memfit::tokenizer::Tokenizer::from_json(text, memfit::text::native_text_backend());
    REQUIRE(theirs.ok());
    const json golden_json = json::parse(memfit::test::read_text(dir + "/golden.json"));
    for (const json& c : golden_json.at("cases")) {
      const std::string t = c.at("text").get<std::string>();
      CAPTURE(name);
      CAPTURE(t);
      const auto enc = ours->encode(t, true);
      REQUIRE(enc.ok());
      CHECK(enc->ids == c.at("ids").get<std::vector<memfit::tokenizer::TokenId>>());
      ++golden;
    }
    for (const std::string& t : memfit::test::generated_texts(23, 150)) {
      CAPTURE(name);
      CAPTURE(t);
      const auto a = ours->encode(t, true);
      const auto b = theirs->encode(t, true);
      REQUIRE(a.ok());
      REQUIRE(b.ok());
      CHECK(a->ids == b->ids);
      ++generated;
    }
  }
  MESSAGE("portable tokenizer: " << golden << " golden cases, " << generated << " generated texts compared");
  CHECK(golden >= 80);
}

TEST_CASE("text api: tokenize() answers {ids, count} or {error}, tokenize_again() reuses the last file") {
  using nlohmann::json;
  const auto ref = memfit::test::reference_dir();
  if (!ref) return memfit::test::skip_loudly("text api (golden/tokenizers/gpt2)");
  const std::string dir = *ref + "/golden/tokenizers/gpt2";
  const std::string file = memfit::test::read_text(dir + "/tokenizer.json");
  const json golden = json::parse(memfit::test::read_text(dir + "/golden.json"));
  const json& c = golden.at("cases").at(1);
  const json reply = json::parse(memfit::text::tokenize(file, c.at("text").get<std::string>()));
  CHECK(reply.at("ids") == c.at("ids"));
  CHECK(reply.at("count") == c.at("ids").size());
  CHECK(json::parse(memfit::text::tokenize_again(c.at("text").get<std::string>())) == reply);
  const json bad = json::parse(memfit::text::tokenize(R"({"model": {"type": "Nope"}})", "x"));
  CHECK(bad.at("error").at("code") == "invalid_value");
  CHECK(bad.at("error").at("message").get<std::string>().find("Nope") != std::string::npos);
}

TEST_CASE("grapheme clusters: the portable approximation of UAX #29 equals utf8proc's on real text") {
  // Clusters the Precompiled normalizer walks: combining sequences, Hangul jamo, emoji with
  // modifiers and ZWJ, flags, CR LF, controls — generated texts plus hand-made hard cases.
  std::vector<std::string> texts = memfit::test::generated_texts(4242, 400);
  texts.insert(texts.end(), {"e\xCC\x81\xCC\xA3x", "\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8\xEA\xB0\x80", "\r\n\n\r",
                             "\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB", "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD!",
                             "\xF0\x9F\x87\xAF\xF0\x9F\x87\xB5\xF0\x9F\x87\xBA\xF0\x9F\x87\xB8\xF0\x9F\x87\xA6",
                             "a\xE2\x80\x8D" "b", "\xE0\xA4\x95\xE0\xA5\x8D\xE0\xA4\xB7\xE0\xA4\xBF", "x\x01\xCC\x81"});
  std::size_t clusters = 0;
  for (const std::string& t : texts) {
    CAPTURE(t);
    for (std::size_t at = 0; at < t.size();) {
      const std::size_t end = native().grapheme_end(t, at);
      CHECK(portable().grapheme_end(t, at) == end);
      at = end;
      ++clusters;
    }
  }
  MESSAGE(clusters << " clusters compared");
  CHECK(clusters > 5000);
}
