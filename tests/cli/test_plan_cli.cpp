// `memfit plan` end to end on a local config.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "support/reference.h"
#include "support/run_process.h"

using memfit::test::run_memfit;

TEST_CASE("plan --json: the map, bytes per device and the budgets used") {
  const std::string cfg = memfit::test::fixture_path("configs/gpt2.json");
  // By default the class from_pretrained builds (GPT2LMHeadModel, lm_head tied to wte) as current
  // transformers allocates it: GPT-2's published 124,439,808 parameters × 4 bytes, no buffers.
  auto r = run_memfit({"plan", cfg, "--max-memory", "0=200MB,cpu=1GB", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["model_class"] == "GPT2LMHeadModel");
  CHECK(j["device_map"]["transformer.wte"] == 0);
  CHECK(j["device_map"]["transformer.drop"] == 0);  // modules without parameters are placed too
  CHECK(j["max_memory"]["0"] == 200000000);  // one GPU: the budget stays as given
  double sum = 0;
  for (const auto& [k, v] : j["bytes_per_device"].items()) sum += v.get<double>();
  CHECK(sum == 124439808.0 * 4);
  CHECK(j["bytes_per_device"]["0"].get<double>() <= 200000000);
  CHECK(j["streamed_bytes"].get<double>() == sum - j["bytes_per_device"]["0"].get<double>());
  // --compat accelerate: accelerate's AutoModel class (GPT2Model) with transformers 4.40's
  // buffers — a bool causal mask [1, 1, 1024, 1024] (1 bit each in accelerate's count) and a
  // float32 scalar in each of the 12 layers.
  r = run_memfit({"plan", cfg, "--max-memory", "0=200MB,cpu=1GB", "--json", "--compat", "accelerate"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  j = nlohmann::json::parse(r.out);
  CHECK(j["model_class"] == "GPT2Model");
  CHECK(j["device_map"]["wte"] == 0);
  sum = 0;
  for (const auto& [k, v] : j["bytes_per_device"].items()) sum += v.get<double>();
  CHECK(sum == 124439808.0 * 4 + 12 * (1024.0 * 1024 / 8 + 4));
  CHECK(run_memfit({"plan", cfg, "--max-memory", "cpu=1GB", "--compat", "memfit"}).exit_code == 2);
}

TEST_CASE("plan --output writes a map that --check accepts; errors write nothing") {
  const std::string cfg = memfit::test::fixture_path("configs/gpt2.json");
  char tmpl[] = "/tmp/memfit-plan-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string out = dir + "/map.json";
  auto r = run_memfit({"plan", cfg, "--max-memory", "0=300MB,cpu=1GB", "--device-map", "sequential",
                       "--output", out});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(run_memfit({"plan", cfg, "--check", out}).exit_code == 0);
  // Written again over the first map (a rename of a temporary file beside it): nothing else is left.
  r = run_memfit({"plan", cfg, "--max-memory", "0=300MB,cpu=1GB", "--device-map", "sequential", "--output", out});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()) == 1);
  // A folder that does not exist: exit 10 naming the file, and no file anywhere.
  r = run_memfit({"plan", cfg, "--max-memory", "0=300MB,cpu=1GB", "--output", dir + "/missing/map.json"});
  CHECK(r.exit_code == 10);
  CHECK(r.err == "memfit: error: " + dir + "/missing/map.json: cannot write\n");
  // A map that misses tensors is reported by name.
  {
    std::FILE* f = std::fopen((dir + "/partial.json").c_str(), "w");
    std::fputs(R"({"transformer.wte": 0, "transformer.wpe": 0, "transformer.h": "cpu", "lm_head": 0})", f);
    std::fclose(f);
  }
  auto partial = run_memfit({"plan", cfg, "--check", dir + "/partial.json"});
  CHECK(partial.exit_code != 0);
  CHECK(partial.err.find("'transformer.ln_f.weight'") != std::string::npos);
  // Impossible without disk, unparsable sizes, unknown devices: an error and no file.
  const std::string none = dir + "/none.json";
  auto no_disk = run_memfit({"plan", cfg, "--max-memory", "0=10MB,cpu=10MB", "--no-disk", "--output", none});
  CHECK(no_disk.exit_code == 3);  // invalid input: budgets that cannot hold the model
  CHECK(no_disk.err.find("does not fit without disk") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(none));
  CHECK(run_memfit({"plan", cfg, "--max-memory", "0=lots"}).exit_code == 2);
  auto cuda = run_memfit({"plan", cfg, "--max-memory", "cuda:0=24GiB"});
  CHECK(cuda.exit_code == 2);
  CHECK(cuda.err.find("write GPU 0 as \"0\"") != std::string::npos);
  std::filesystem::remove_all(dir);
}
