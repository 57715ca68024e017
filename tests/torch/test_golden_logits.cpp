// Golden logits from transformers 4.40 (shared/reference/golden): every checkpoint layout of
// tiny-gpt2 and tiny-llama, loaded and run by memfit-torch, within 1e-4 of the real forward,
// with the same argmax at every position and the same 12 greedy tokens.
#include <doctest/doctest.h>

#include <cstdio>

#include "support/reference.h"
#include "torch_test_support.h"

namespace memfit::test {
namespace {

struct Variant {
  const char* model;        // golden folder with golden.json
  const char* weights;      // checkpoint folder under golden/
  const char* logits;       // golden.json logits variant
  const char* config;       // config folder ("" = the weights')
};

constexpr Variant kVariants[] = {
    {"tiny-gpt2", "tiny-gpt2", "fp32", ""},
    {"tiny-gpt2", "tiny-gpt2/sharded", "fp32", ""},
    {"tiny-gpt2", "tiny-gpt2/fp16", "fp16_upcast_fp32", ""},
    {"tiny-gpt2", "tiny-gpt2/bf16", "bf16_upcast_fp32", ""},
    {"tiny-gpt2", "tiny-gpt2/bin", "fp32", ""},
    {"tiny-gpt2", "tiny-gpt2/bin-sharded", "fp32", ""},
    {"tiny-llama", "tiny-llama", "fp32", ""},
    {"tiny-llama", "tiny-llama/sharded", "fp32", ""},
    {"tiny-llama", "tiny-llama/fp16", "fp16_upcast_fp32", ""},
    {"tiny-llama", "tiny-llama/bf16", "bf16_upcast_fp32", ""},
    // The README: weights byte-identical to tiny-llama's; only the config differs.
    {"tiny-llama-ropescaled", "tiny-llama", "fp32", "tiny-llama-ropescaled"},
};

}  // namespace

TEST_CASE("golden logits: every checkpoint layout within 1e-4 of transformers, exact argmax") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("golden logits (tiny-gpt2, tiny-llama)");
  for (const Variant& v : kVariants) {
    CAPTURE(v.weights);
    CAPTURE(v.logits);
    const auto golden = golden_json(v.model);
    const Loaded m = load(*dir + "/" + v.weights, "", *v.config ? *dir + "/" + v.config : "");
    double worst = 0;
    for (const char* input : {"A", "B", "C"}) {
      CAPTURE(input);
      const auto logits = run(m, golden_input(golden, input));
      const auto& g = golden["logits"][v.logits][input];
      REQUIRE(logits.sizes().vec() == g["shape"].get<std::vector<std::int64_t>>());
      const GoldenDiff d = compare_to_golden(logits, g);
      CHECK(d.max_abs <= 1e-4);
      CHECK(d.argmax_mismatches == 0);
      worst = std::max(worst, d.max_abs);
    }
    std::fprintf(stderr, "golden %-22s %-18s vs %-17s max abs diff %.3g\n", v.model, v.weights, v.logits, worst);
  }
}

TEST_CASE("golden generation: 12 greedy tokens with a KV cache equal transformers' generate()") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("golden generation");
  const std::pair<const char*, const char*> cases[] = {
      {"tiny-gpt2", ""}, {"tiny-llama", ""}, {"tiny-llama-ropescaled", "tiny-llama"}};
  for (const auto& [model, weights] : cases) {
    CAPTURE(model);
    const auto golden = golden_json(model);
    const std::string w = *dir + "/" + (*weights ? weights : model);
    const Loaded m = load(w, "", *weights ? *dir + "/" + model : "");
    const auto& gen = golden["generation"];
    const auto prompt = golden["inputs"][gen["input"].get<std::string>()]["input_ids"][0]
                            .get<std::vector<std::int64_t>>();
    torchrt::Executor exec(*m.model, *m.program);
    const auto ids = exec.generate(prompt, gen["max_new_tokens"].get<int>());
    CHECK(ids == gen["new_token_ids"].get<std::vector<std::int64_t>>());
  }
}

}  // namespace memfit::test
