// `memfit load` / `memfit forward` end to end: memfit execs memfit-torch from its own folder.
#include <doctest/doctest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "support/reference.h"
#include "support/run_process.h"
#include "torch_test_support.h"

namespace memfit::test {

TEST_CASE("cli: memfit forward --json gives golden last logits, identical across placements") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("memfit forward CLI");
  const auto golden = golden_json("tiny-gpt2");
  std::vector<std::vector<double>> first;
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{}, {"--device-map", R"({"": "disk"})"},
        {"--device-map", R"({"": "disk"})", "--no-prefetch"}, {"--device-map", "sequential", "--max-memory", "cpu=500KB"}}) {
    std::vector<std::string> args = {"forward", *dir + "/tiny-gpt2", "--tokens",
                                     "496,11,616,290,318,779,13;0,999,1,998,500,250,125", "--json", "--threads", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    const ProcessResult r = run_memfit(args);
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["shape"] == nlohmann::json::array({2, 7, 1000}));
    CHECK(j["seconds"].get<double>() >= 0);
    const auto last = j["last_logits"].get<std::vector<std::vector<double>>>();
    const auto& g = golden["logits"]["fp32"]["B"]["last"];
    double worst = 0;
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t v = 0; v < 1000; ++v) worst = std::max(worst, std::abs(last[b][v] - g[b][v].get<double>()));
    CHECK(worst <= 1e-4);
    if (first.empty()) first = last;
    CHECK(last == first);  // bitwise: the JSON prints floats round-trip exactly
  }
}

TEST_CASE("cli: memfit load --json reports placement, bytes, time and peak RSS") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("memfit load CLI");
  const ProcessResult r = run_memfit({"load", *dir + "/tiny-llama/sharded", "--device-map",
                                      R"({"model.embed_tokens": "cpu", "model.layers": "disk", "model.norm": "cpu", "lm_head": "cpu"})",
                                      "--json"});
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["bytes"] == 1'251'584);
  CHECK(j["bytes_per_device"]["disk"].get<double>() > 0);
  CHECK(j["bytes_per_device"]["cpu"].get<double>() > 0);
  CHECK(j["peak_rss_bytes"].get<double>() > 0);
  CHECK(j["format"] == "safetensors");
}

TEST_CASE("cli: a map written by memfit plan loads, and so do maps that name dropouts") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("memfit plan → load");
  char tmpl[] = "/tmp/memfit-planload-XXXXXX";
  const std::string tmp = mkdtemp(tmpl);
  const std::string map = tmp + "/map.json";
  // Budgets that split the model over cpu and disk, so the map has many keys.
  ProcessResult plan = run_memfit({"plan", *dir + "/tiny-gpt2", "--max-memory", "cpu=600KB", "--output", map});
  CAPTURE(plan.err);
  REQUIRE(plan.exit_code == 0);
  const auto written = nlohmann::json::parse(read_text(map));
  CHECK(written.contains("transformer.wte"));  // GPT2LMHeadModel's names, not GPT2Model's
  ProcessResult load = run_memfit({"load", *dir + "/tiny-gpt2", "--device-map", map, "--json"});
  CAPTURE(load.err);
  CHECK(load.exit_code == 0);
  // accelerate's AutoModel maps are for GPT2Model: they are not this checkpoint's class.
  ProcessResult compat = run_memfit({"plan", *dir + "/tiny-gpt2", "--max-memory", "cpu=600KB", "--compat",
                                     "accelerate", "--json"});
  REQUIRE(compat.exit_code == 0);
  CHECK(nlohmann::json::parse(compat.out)["model_class"] == "GPT2Model");
  // The seed's hand-written map: modules without parameters (transformer.drop) are named too.
  ProcessResult seed = run_memfit(
      {"forward", *dir + "/tiny-gpt2", "--tokens", "1,2,3", "--json", "--device-map",
       R"({"transformer.wte": "cpu", "transformer.wpe": "cpu", "transformer.drop": "cpu", "transformer.h.0": "disk",
           "transformer.h.1": "cpu", "transformer.h.2": "cpu", "transformer.h.3": "cpu", "transformer.ln_f": "cpu",
           "lm_head": "cpu"})"});
  CAPTURE(seed.err);
  CHECK(seed.exit_code == 0);
  std::filesystem::remove_all(tmp);
}

TEST_CASE("cli: load errors keep their exit codes through memfit") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("memfit load CLI errors");
  ProcessResult r = run_memfit({"load", *dir + "/tiny-gpt2", "--device-map", R"({"": 0})"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("GPU 0") != std::string::npos);
  r = run_memfit({"forward", *dir + "/tiny-gpt2", "--tokens", "1,x"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("'x' is not a token id") != std::string::npos);
  r = run_memfit({"load", *dir + "/nope"});
  CHECK(r.exit_code == 10);
}

TEST_CASE("cli: memfit-torch's own argument parser: both value forms, ranges, required arguments, --help") {
  ProcessResult r = run_memfit({"forward", "some-dir", "--tokens=1,2", "--prefetch-depth", "0"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "memfit: error: --prefetch-depth: '0' is not an integer in [1, 64]\n");
  r = run_memfit({"forward", "some-dir", "--prefetch-depth=65", "--tokens", "1"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("'65' is not an integer in [1, 64]") != std::string::npos);
  r = run_memfit({"forward", "some-dir"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--tokens is required") != std::string::npos);
  r = run_memfit({"load", "--json"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("DIR is required") != std::string::npos);
  r = run_memfit({"load", "a", "b"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unexpected argument 'b'") != std::string::npos);
  r = run_memfit({"load", "a", "--json=1"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--json takes no value") != std::string::npos);
  r = run_memfit({"load", "a", "--device-mapp", "auto"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown option '--device-mapp'") != std::string::npos);
  r = run_memfit({"load", "a", "--max-memory"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--max-memory needs a value") != std::string::npos);
  r = run_memfit({"load", "--help"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("--offload-folder VALUE") != std::string::npos);
  CHECK(r.out.find("--prefetch-depth") == std::string::npos);  // forward's only
}

}  // namespace memfit::test
