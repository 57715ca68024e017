// `memfit generate` end to end: the seed's example (the tiny GPT-2 spread over CPU and disk with
// the real GPT-2 tokenizer, prompt text in, decoded text out), stop strings, sampling options and
// the errors a user meets.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "load_tokenizer.h"
#include "support/reference.h"
#include "support/run_process.h"
#include "torch_test_support.h"

namespace memfit::test {
namespace {

// The seed's hand-written map: the embedding on the CPU, the first block on disk, the rest on the
// execution device (the CPU here).
const char* kSeedMap = R"({"transformer.wte": "cpu", "transformer.h.0": "disk", "": "cpu"})";

// Text of token ids by core's tokenizer (held to the real library by its golden tests).
std::string decoded(const std::string& tokenizer, const nlohmann::json& ids) {
  const auto text = text::load_tokenizer(tokenizer).decode(ids.get<std::vector<tokenizer::TokenId>>());
  REQUIRE(text.ok());
  return *text;
}

}  // namespace

TEST_CASE("generate: the seed's example — tiny GPT-2 on CPU + disk, GPT-2's tokenizer, text in and out") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("memfit generate end to end");
  const auto golden = golden_json("tiny-gpt2");
  const std::string tok = *dir + "/gpt2-tokenizer";
  const auto& gen = golden["generation"];
  const auto& prompt_ids = golden["inputs"][gen["input"].get<std::string>()]["input_ids"][0];
  // The golden prompt's ids are all inside the tiny model's 1,000-token vocabulary; as text they
  // go through the tokenizer and must come back as the same ids.
  const std::string prompt = decoded(tok, prompt_ids);
  const std::vector<std::string> common = {"generate", *dir + "/tiny-gpt2", "--tokenizer", tok, "--prompt", prompt,
                                           "--max-new-tokens", std::to_string(gen["max_new_tokens"].get<int>()),
                                           "--device-map", kSeedMap, "--threads", "1"};
  auto args = common;
  args.push_back("--json");
  const ProcessResult r = run_memfit(args);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["prompt_ids"] == prompt_ids);
  CHECK(j["new_token_ids"] == gen["new_token_ids"]);
  CHECK(j["text"] == decoded(tok, gen["new_token_ids"]));
  CHECK(j["stopped_at"] == "max_new_tokens");
  CHECK(j["stats"]["bytes_streamed_per_token"].get<double>() > 0);  // transformer.h.0 streams from disk
  CHECK(j["stats"]["tokens_per_s"].get<double>() > 0);
  // Without --json the text streams to stdout, ending with a newline.
  const ProcessResult plain = run_memfit(common);
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.out == j["text"].get<std::string>() + "\n");

  // --stop: generation ends once the text holds the stop string; the text is cut before it.
  const std::string text = j["text"].get<std::string>();
  const std::string stop = text.substr(text.size() / 2, 3);
  args.insert(args.end(), {"--stop", stop});
  const auto s = nlohmann::json::parse(run_memfit(args).out);
  CHECK(s["stopped_at"] == "stop");
  CHECK(s["text"] == text.substr(0, text.find(stop)));
  CHECK(s["new_token_ids"].size() < gen["new_token_ids"].size());
}

TEST_CASE("generate: seeded sampling is reproducible; bad options and prompts are named") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("memfit generate options");
  const std::string model = *dir + "/tiny-llama";
  auto sample = [&](const std::string& seed) {
    const ProcessResult r = run_memfit({"generate", model, "--tokens", "1,50,60,70", "--max-new-tokens", "8",
                                        "--temperature", "1.5", "--top-k", "50", "--top-p", "0.9",
                                        "--repetition-penalty", "1.3", "--seed", seed, "--json"});
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out)["new_token_ids"];
  };
  CHECK(sample("3") == sample("3"));
  CHECK(sample("3").size() == 8);

  struct Bad {
    std::vector<std::string> args;
    int exit_code;
    const char* says;
  };
  const std::string gpt2 = *dir + "/tiny-gpt2", tok = *dir + "/gpt2-tokenizer";
  const Bad bad[] = {
      {{"generate", model, "--tokens", "1,2", "--temperature", "0"}, 2, "temperature"},
      {{"generate", model, "--tokens", "1,2", "--greedy", "--temperature", "0.5"}, 2, "--greedy"},
      {{"generate", model, "--tokens", "1,2", "--prompt", "hi"}, 2, "exactly one of"},
      {{"generate", model, "--tokens", "1,2000"}, 2, "token id 2000"},
      {{"generate", model, "--prompt", "hi"}, 10, "no tokenizer.json"},
      {{"generate", gpt2, "--tokenizer", tok, "--chat", "hi"}, 10, "tokenizer_config.json"},
      // GPT-2's tokenizer on a model with 1,000 tokens: the first id past them is named.
      {{"generate", gpt2, "--tokenizer", tok, "--prompt", "Hello, my name is", "--device-map", kSeedMap}, 2,
       "token id 15496 is out of range"},
      {{"generate", gpt2, "--tokenizer", tok, "--prompt", ""}, 2, "empty"},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.args);
    const ProcessResult r = run_memfit(b.args);
    CHECK(r.exit_code == b.exit_code);
    CHECK(r.err.find(b.says) != std::string::npos);
    CHECK(r.err.find("Exception raised from") == std::string::npos);  // no C++ backtrace
  }
}

}  // namespace memfit::test
