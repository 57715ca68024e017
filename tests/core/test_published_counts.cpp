// Published parameter counts (the Hub's safetensors totals / the model cards), checked on real
// config.json files in memfit's default mode (Mode::kMemfit, the architectures[0] class).
//
// Where ../shared/reference/configs/<name>/config.json holds the real file, that is what is read
// (and a missing file there fails the case; only a missing reference dir as a whole skips, loudly).
// Where shared/ has no copy, the case reads tests/fixtures/configs/<org>--<name>.json, a real
// config.json from the Hub (a missing fixture fails too):
//   reference: Llama-2-7b-hf, opt-1.3b, phi-2, Meta-Llama-3-8B, Mixtral-8x7B-v0.1
//   fixture:   gpt2 (equal to openai-community/gpt2's config: vocab 50257, n_positions 1024,
//              n_embd 768, n_layer 12, n_head 12; shared/ has gpt2-xl only), Mistral-7B-v0.1
//              (shared/real-hub has Mistral-7B-Instruct-v0.3 only, a different vocab),
//              bloom-560m, falcon-7b
// The expected numbers are the published ones, never memfit's own output.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "memfit/memory/estimate.h"
#include "support/reference.h"

using namespace memfit;
using namespace memfit::test;

namespace {

enum class From { kReference, kFixture };

void check_published(const std::string& hub_id, From from, const std::string& file,
                     const std::string& cls, std::uint64_t published) {
  std::string path;
  if (from == From::kReference) {
    const auto ref = reference_dir();
    if (!ref) {
      skip_loudly("published parameter count of " + hub_id + " (configs/" + file + ")");
      return;
    }
    path = *ref + "/configs/" + file;
  } else {
    path = fixture_path("configs/" + file);
  }
  REQUIRE_MESSAGE(file_exists(path), "config file missing for " << hub_id << ": " << path);

  EstimateRequest req;
  req.config_text = read_text(path);
  req.name = hub_id;
  req.mode = Mode::kMemfit;
  const Result<Report> r = estimate(req);
  REQUIRE_MESSAGE(r.ok(), hub_id << ": " << (r.ok() ? "" : r.error().message()));
  CHECK(r->model_class == cls);
  CHECK_MESSAGE(r->parameters == published, hub_id << " from " << path << ": memfit " << r->parameters
                                                   << ", published " << published);
}

}  // namespace

TEST_CASE("published count: openai-community/gpt2 124,439,808") {
  check_published("openai-community/gpt2", From::kFixture, "gpt2.json", "GPT2LMHeadModel", 124439808ULL);
}
TEST_CASE("published count: meta-llama/Llama-2-7b-hf 6,738,415,616") {
  check_published("meta-llama/Llama-2-7b-hf", From::kReference, "Llama-2-7b-hf/config.json",
                  "LlamaForCausalLM", 6738415616ULL);
}
TEST_CASE("published count: mistralai/Mistral-7B-v0.1 7,241,732,096") {
  check_published("mistralai/Mistral-7B-v0.1", From::kFixture, "mistralai--Mistral-7B-v0.1.json",
                  "MistralForCausalLM", 7241732096ULL);
}
TEST_CASE("published count: bigscience/bloom-560m 559,214,592") {
  check_published("bigscience/bloom-560m", From::kFixture, "bigscience--bloom-560m.json",
                  "BloomForCausalLM", 559214592ULL);
}
TEST_CASE("published count: facebook/opt-1.3b 1,315,758,080") {
  check_published("facebook/opt-1.3b", From::kReference, "opt-1.3b/config.json", "OPTForCausalLM",
                  1315758080ULL);
}
TEST_CASE("published count: microsoft/phi-2 2,779,683,840") {
  check_published("microsoft/phi-2", From::kReference, "phi-2/config.json", "PhiForCausalLM",
                  2779683840ULL);
}
TEST_CASE("published count: tiiuae/falcon-7b 6,921,720,704") {
  check_published("tiiuae/falcon-7b", From::kFixture, "tiiuae--falcon-7b.json", "FalconForCausalLM",
                  6921720704ULL);
}
TEST_CASE("published count: meta-llama/Meta-Llama-3-8B 8,030,261,248") {
  check_published("meta-llama/Meta-Llama-3-8B", From::kReference, "Meta-Llama-3-8B/config.json",
                  "LlamaForCausalLM", 8030261248ULL);
}
TEST_CASE("published count: mistralai/Mixtral-8x7B-v0.1 46,702,792,704") {
  check_published("mistralai/Mixtral-8x7B-v0.1", From::kReference, "Mixtral-8x7B-v0.1/config.json",
                  "MixtralForCausalLM", 46702792704ULL);
}
