// Core's tokenizer (over the native PCRE2/utf8proc backend) against golden tokenizations made by
// the real implementations: the Rust `tokenizers` library for the four tokenizer.json files, and
// transformers' slow GPT2Tokenizer for GPT-2's vocab.json + merges.txt. Every case exact, encode
// (with and without special tokens) and decode.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "load_tokenizer.h"
#include "support/reference.h"

namespace {

using memfit::tokenizer::TokenId;
using memfit::tokenizer::Tokenizer;
using nlohmann::json;

std::vector<TokenId> ids_of(const json& j) { return j.get<std::vector<TokenId>>(); }

// Compares every case of golden.json in `dir`; returns how many were compared.
int check_golden_dir(const std::string& dir, bool has_no_special) {
  const Tokenizer tok = memfit::text::load_tokenizer(dir);
  const json golden = json::parse(memfit::test::read_text(dir + "/golden.json"));
  int compared = 0;
  for (const json& c : golden.at("cases")) {
    const std::string text = c.at("text").get<std::string>();
    CAPTURE(dir);
    CAPTURE(text);
    const auto with = tok.encode(text, true);
    REQUIRE(with.ok());
    CHECK(with->ids == ids_of(c.at("ids")));
    CHECK(with->tokens == c.at("tokens").get<std::vector<std::string>>());
    if (has_no_special) {
      const auto without = tok.encode(text, false);
      REQUIRE(without.ok());
      CHECK(without->ids == ids_of(c.at("ids_no_special")));
    }
    const auto decoded = tok.decode(ids_of(c.at("ids")), false);
    REQUIRE(decoded.ok());
    CHECK(*decoded == c.at("decoded").get<std::string>());
    // Streaming: the chunks, id by id, join into the same text.
    memfit::tokenizer::DecodeStream stream(tok, false);
    std::string streamed;
    for (const TokenId id : ids_of(c.at("ids"))) {
      const auto chunk = stream.step(id);
      REQUIRE(chunk.ok());
      if (*chunk) streamed += **chunk;
    }
    CHECK(streamed == c.at("decoded").get<std::string>());
    ++compared;
  }
  return compared;
}

}  // namespace

TEST_CASE("tokenizer golden: tokenizer.json of GPT-2, Llama 3, Qwen3, Mistral match the Rust library") {
  const auto ref = memfit::test::reference_dir();
  if (!ref) return memfit::test::skip_loudly("tokenizer golden (golden/tokenizers)");
  int total = 0;
  for (const char* name : {"gpt2", "llama3", "qwen3", "mistral"}) {
    const int n = check_golden_dir(*ref + "/golden/tokenizers/" + name, true);
    CHECK_MESSAGE(n >= 20, name);
    total += n;
  }
  MESSAGE("tokenizer parity: " << total << " tokenizer.json cases compared");
  CHECK(total >= 80);
}

TEST_CASE("tokenizer golden: GPT-2's vocab.json + merges.txt match transformers' GPT2Tokenizer") {
  const auto ref = memfit::test::reference_dir();
  if (!ref) return memfit::test::skip_loudly("tokenizer golden (golden/gpt2-tokenizer)");
  const int n = check_golden_dir(*ref + "/golden/gpt2-tokenizer", false);
  MESSAGE("tokenizer parity: " << n << " vocab.json + merges.txt cases compared");
  CHECK(n >= 40);
}
