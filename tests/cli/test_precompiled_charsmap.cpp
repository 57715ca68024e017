// The Precompiled normalizer (memfit/tokenizer/precompiled_charsmap.h): the expectations of the
// spm_precompiled crate's own tests (src/tests.rs) on sentencepiece's nmt_nfkc rules — taken here
// from a model libsentencepiece trains with them — and one hand-made blob per error code.
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "memfit/format/base64.h"
#include "memfit/tokenizer/precompiled_charsmap.h"
#include "memfit/tokenizer/sentencepiece_model.h"
#include "memfit/tokenizer/tokenizer.h"
#include "native_text_backend.h"
#include "support/reference.h"
#include "support/sentencepiece_models.h"

namespace {

using memfit::ErrorCode;
using memfit::tokenizer::PrecompiledCharsmap;
using memfit::tokenizer::Tokenizer;

std::string nmt_nfkc_charsmap() {
  const std::string path = memfit::test::spm_model(memfit::test::spm_trainings().at(0));  // unigram-nfkc
  const auto m = memfit::tokenizer::SentencePieceModel::parse(memfit::test::read_text(path));
  REQUIRE(m.ok());
  REQUIRE(m->normalizer_name == "nmt_nfkc");
  REQUIRE_FALSE(m->precompiled_charsmap.empty());
  return m->precompiled_charsmap;
}

// A tokenizer whose one token is its whole normalized input: the Precompiled normalizer, then a
// Unigram with only <unk> (the text of fused unknown pieces is the token).
std::string normalize(const std::string& charsmap, const std::string& text) {
  const nlohmann::json j = {
      {"normalizer", {{"type", "Precompiled"}, {"precompiled_charsmap", memfit::base64_encode(charsmap)}}},
      {"model", {{"type", "Unigram"}, {"unk_id", 0U}, {"vocab", nlohmann::json::array({nlohmann::json::array({"<unk>", 0.0})})}}}};
  const auto tok = Tokenizer::from_json(j.dump(), memfit::text::native_text_backend());
  REQUIRE_MESSAGE(tok.ok(), tok.error().message());
  const auto e = tok->encode(text, false);
  REQUIRE(e.ok());
  REQUIRE(e->tokens.size() == 1);
  return e->tokens[0];
}

TEST_CASE("Precompiled: the spm_precompiled crate's expectations on nmt_nfkc") {
  const std::string blob = nmt_nfkc_charsmap();
  const auto map = PrecompiledCharsmap::parse(blob);
  REQUIRE(map.ok());
  // test_load_precompiled_map
  CHECK(map->transform("\uFB01") == std::optional<std::string_view>("fi"));
  CHECK(map->transform(" ") == std::nullopt);
  CHECK(map->transform("𝔾") == std::optional<std::string_view>("G"));
  CHECK(map->transform("𝕠") == std::optional<std::string_view>("o"));
  // (the crate's nmt_nfkc.bin also maps U+200D to " "; libsentencepiece 0.1.97's nmt_nfkc keeps
  // it, as its spm_normalize shows, so that expectation does not carry over)
  // test_precompiled_failure_mode, test_precompiled_hindi, test_precompiled_multi_char_replace_bug
  CHECK(normalize(blob, "เขาไม่ได้พูดสักคำ") == "เขาไม\u0e48ได\u0e49พ\u0e39ดส\u0e31กค\u0e4dา");
  CHECK(normalize(blob, "ड़ी दुख") == "ड\u093cी द\u0941ख");
  CHECK(normalize(blob, "\xd8\xa7\xd9\x93") == "آ");
}

std::string le32(std::uint32_t v) {
  return {static_cast<char>(v & 0xFF), static_cast<char>((v >> 8) & 0xFF), static_cast<char>((v >> 16) & 0xFF),
          static_cast<char>(v >> 24)};
}

// A blob: the trie size, the units, the normalized strings.
std::string blob_of(const std::vector<std::uint32_t>& units, const std::string& normalized) {
  std::string b = le32(static_cast<std::uint32_t>(units.size() * 4));
  for (const std::uint32_t u : units) b += le32(u);
  return b + normalized;
}

// A valid 256-unit trie mapping "a" to the string at `value` of `normalized` (Darts-clone units:
// offset in bits 10+, a leaf flag at bit 8, the label in bits 0-7, values with bit 31 set).
std::vector<std::uint32_t> trie_a(std::uint32_t value, std::size_t size = 256) {
  std::vector<std::uint32_t> u(size, 0);
  u[0] = 1u << 10;                              // root: offset 1, so the root node is unit 1
  u[1 ^ 'a'] = 'a' | 1u << 8 | (96u ^ 128u) << 10;  // "a": a leaf, next node at unit 128
  u[128] = value | 1u << 31;                    // the leaf's value: an offset into the strings
  return u;
}

ErrorCode code_of(const std::string& blob, std::string* message = nullptr) {
  const auto r = PrecompiledCharsmap::parse(blob);
  REQUIRE_FALSE(r.ok());
  if (message) *message = r.error().message();
  return r.error().code();
}

TEST_CASE("Precompiled: a hand-made trie, shortest match for the whole chunk") {
  const auto map = PrecompiledCharsmap::parse(blob_of(trie_a(2), std::string("x\0b\0", 4)));
  REQUIRE(map.ok());
  CHECK(map->transform("a") == std::optional<std::string_view>("b"));
  CHECK(map->transform("abc") == std::optional<std::string_view>("b"));
  CHECK(map->transform("ba") == std::nullopt);
  CHECK(map->transform(std::string("\0a", 2)) == std::nullopt);  // a NUL ends the key
}

TEST_CASE("Precompiled: each broken blob has its error") {
  std::string m;
  CHECK((code_of("abc", &m) == ErrorCode::kCharsmapTruncated));
  CHECK(m == "3 bytes, under the 4 of the trie size");
  CHECK((code_of(le32(1024) + std::string(100, '\0'), &m) == ErrorCode::kCharsmapTruncated));
  CHECK(m == "the trie size 1024 runs past the blob's 100 bytes after the size");
  CHECK((code_of(le32(6) + std::string(8, '\0'), &m) == ErrorCode::kCharsmapTrieSize));
  CHECK(m == "the trie size 6 is not a positive multiple of 4 bytes");
  CHECK((code_of(le32(0) + "ab") == ErrorCode::kCharsmapTrieSize));
  std::vector<std::uint32_t> far_root = trie_a(0);
  far_root[0] = 300u << 10;
  CHECK((code_of(blob_of(far_root, "b"), &m) == ErrorCode::kCharsmapOutOfBounds));
  CHECK(m == "the root's offset leads to unit 300, past the trie's 256 units");
  CHECK((code_of(blob_of(trie_a(0, 200), "b"), &m) == ErrorCode::kCharsmapOutOfBounds));
  CHECK(m == "unit 1 has its byte-200 child at unit 201, past the trie's 200 units");
  CHECK((code_of(blob_of(trie_a(50), std::string("b\0", 2)), &m) == ErrorCode::kCharsmapOutOfBounds));
  CHECK(m == "unit 128 points at byte 50 of the normalized strings, which have 2");
  CHECK((code_of(blob_of(trie_a(0), "\xff"), &m) == ErrorCode::kCharsmapInvalidUtf8));
  CHECK(m == "the normalized strings are not UTF-8 (byte 0 of them)");
  CHECK((code_of(blob_of(trie_a(1), std::string("\xc3\xa9\0", 3)), &m) == ErrorCode::kCharsmapInvalidUtf8));
  CHECK(m == "unit 128 points at byte 1, inside a character of the normalized strings");
}

TEST_CASE("Precompiled: tokenizer.json errors name the field") {
  const auto load = [](const std::string& charsmap) {
    const std::string j = R"({"normalizer": {"type": "Precompiled", "precompiled_charsmap": )" + charsmap +
                          R"(}, "model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0]]}})";
    const auto r = Tokenizer::from_json(j, memfit::text::native_text_backend());
    REQUIRE_FALSE(r.ok());
    return r.error();
  };
  CHECK(load("\"YWJj\"").message() == "tokenizer.json: normalizer.precompiled_charsmap: 3 bytes, under the 4 of the trie size");
  CHECK((load("\"YWJj\"").code() == ErrorCode::kCharsmapTruncated));
  CHECK(load("\"abc\"").message() == "tokenizer.json: normalizer.precompiled_charsmap: is not base64 (RFC 4648, with padding)");
  CHECK(load("7").message() == "tokenizer.json: normalizer.precompiled_charsmap: must be a base64 string, got number");
}


}  // namespace
