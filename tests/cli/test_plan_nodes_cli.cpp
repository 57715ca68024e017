// `memfit plan --nodes`: a multi-host plan end to end on a local config.
#include <doctest/doctest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "support/reference.h"
#include "support/run_process.h"

using memfit::test::run_memfit;

TEST_CASE("plan --nodes --json: one stage per host, each with its own map; --output writes them all") {
  const std::string cfg = memfit::test::fixture_path("configs/gpt2.json");
  const auto config = nlohmann::json::parse(memfit::test::fixture("configs/gpt2.json"));
  const auto out = std::filesystem::temp_directory_path() / "memfit_plan_nodes_maps.json";
  std::filesystem::remove(out);
  auto r = run_memfit({"plan", cfg, "--nodes", "a=0:200MB,cpu:1GB;b=cpu:2GB", "--link", "100Gbps,20us",
                       "--dtype", "float16", "--json", "--output", out.string()});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["nodes"].size() == 2);
  CHECK(j["nodes"][0]["name"] == "a");
  CHECK(j["nodes"][0]["first_unit"] == "transformer.wte");
  CHECK(j["nodes"][1]["last_unit"] == "lm_head");
  CHECK(j["hidden"] == config["n_embd"]);
  CHECK(j["bytes_per_boundary"] == config["n_embd"].get<int>() * 2);
  CHECK(j["link"]["bytes_per_s"].get<double>() == doctest::Approx(12.5e9));
  CHECK(j["decode_tokens_per_s"].get<double>() > 0);
  // Host b has no GPU: its whole stage is on its CPU.
  for (const auto& [k, v] : j["nodes"][1]["plan"]["device_map"].items()) CHECK(v == "cpu");
  const auto maps = nlohmann::json::parse(memfit::test::read_text(out.string()));
  CHECK(maps["a"] == j["nodes"][0]["plan"]["device_map"]);
  CHECK(maps["b"] == j["nodes"][1]["plan"]["device_map"]);
  std::filesystem::remove(out);
}

TEST_CASE("plan --nodes: the text form, and bad hosts named") {
  const std::string cfg = memfit::test::fixture_path("configs/gpt2.json");
  auto r = run_memfit({"plan", cfg, "--nodes", "a=cpu:1GB;b=cpu:1GB", "--explain"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("pipeline over 2 nodes") != std::string::npos);
  CHECK(r.out.find("node a: ") != std::string::npos);
  CHECK(r.out.find("sent per token: hidden 768") != std::string::npos);
  r = run_memfit({"plan", cfg, "--nodes", "a=cpu:1GB;a=cpu:1GB"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("node 'a' is given twice") != std::string::npos);
  r = run_memfit({"plan", cfg, "--nodes", "a=cpu:1GB", "--max-memory", "cpu=1GB"});
  CHECK(r.exit_code == 2);
  r = run_memfit({"plan", cfg, "--nodes", "a=cpu:1GB;b=cpu:1GB", "--link", "fast"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--link: 'fast'") != std::string::npos);
}
