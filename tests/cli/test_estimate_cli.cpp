// `memfit estimate` end to end: local files and a mock Hub on 127.0.0.1 with the Hub's errors.
#include <doctest/doctest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "support/mock_hub.h"
#include "support/reference.h"
#include "support/run_process.h"

using memfit::test::MockHub;
using memfit::test::run_memfit;

namespace {

const std::string kGpt2 = memfit::test::fixture_path("configs/gpt2.json");

int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace

TEST_CASE("estimate a local config.json: table, then memfit's details") {
  auto r = run_memfit({"estimate", kGpt2, "--name", "gpt2"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind("┌", 0) == 0);
  CHECK(r.out.find("Memory Usage for loading `gpt2`") != std::string::npos);
  CHECK(r.out.find("124,439,808 parameters") != std::string::npos);
  CHECK(r.err.empty());
}

TEST_CASE("--json has the documented fields") {
  auto r = run_memfit({"estimate", kGpt2, "--name", "gpt2", "--json", "--dtypes", "float16", "int4"});
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["name"] == "gpt2");
  CHECK(j["library"] == "transformers");
  CHECK(j["model_class"] == "GPT2LMHeadModel");
  CHECK(j["mode"] == "memfit");
  CHECK(j["parameters"] == 124439808);
  REQUIRE(j["rows"].size() == 2);
  CHECK(j["rows"][0]["dtype"] == "float16");
  CHECK(j["rows"][1]["training_bytes"].is_null());
  CHECK(j["rows"][1]["training"] == "N/A");
  CHECK(j["module_sizes"].contains(""));
  CHECK(j["largest_layer_names"][0] == "transformer.wte");
}

TEST_CASE("--compat accelerate prints only the table") {
  auto r = run_memfit({"estimate", kGpt2, "--name", "gpt2", "--compat", "accelerate"});
  CHECK(r.exit_code == 0);
  CHECK(count_lines(r.out) == 10);  // 3 title lines + header + rule + 4 rows + bottom
}

TEST_CASE("bad local input: one line on stderr and a distinct exit code") {
  char tmpl[] = "/tmp/memfit-bad-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string bad = dir + "/config.json";
  {
    std::FILE* f = std::fopen(bad.c_str(), "w");
    std::fputs("{\"model_type\": \"gpt2\", \"n_embd\": ", f);
    std::fclose(f);
  }
  auto r = run_memfit({"estimate", bad});
  CHECK(r.exit_code == 3);
  CHECK(r.err.rfind("memfit: error: config.json: not valid JSON", 0) == 0);
  CHECK(count_lines(r.err) == 1);
  auto dir_run = run_memfit({"estimate", dir});  // a folder works like its config.json
  CHECK(dir_run.exit_code == 3);
  auto missing = run_memfit({"estimate", dir + "/nope.json"});
  CHECK(missing.exit_code == 10);
  std::filesystem::remove_all(dir);
  auto usage = run_memfit({"estimate", kGpt2, "--compat", "transformers"});
  CHECK(usage.exit_code == 2);
}

TEST_CASE("Hub: config.json and library_name come from the (mock) Hub") {
  MockHub hub;
  hub.add_model("openai-community/gpt2", "transformers",
                {{"config.json", memfit::test::fixture("configs/gpt2.json")}});
  auto r = run_memfit({"estimate", "openai-community/gpt2", "--json"},
                      {{"HF_ENDPOINT", hub.endpoint()}});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(nlohmann::json::parse(r.out)["parameters"] == 124439808);
  const auto seen = hub.requests();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].path == "/api/models/openai-community/gpt2");
  CHECK(seen[1].path == "/openai-community/gpt2/resolve/main/config.json");
  CHECK(seen[0].authorization.empty());
}

TEST_CASE("Hub errors: gated, not found, no config, no library, unsupported library, network") {
  MockHub hub;
  const std::string cfg = memfit::test::fixture("configs/gpt2.json");
  hub.add_gated_model("meta-llama/Gated", "secret", "transformers", {{"config.json", cfg}});
  hub.add_model("org/no-config", "transformers", {});
  hub.add_model("org/no-library", "", {{"config.json", cfg}});
  hub.add_model("org/diffusers", "diffusers", {{"config.json", cfg}});
  const std::map<std::string, std::string> env{{"HF_ENDPOINT", hub.endpoint()}};

  auto gated = run_memfit({"estimate", "meta-llama/Gated"}, env);
  CHECK(gated.exit_code == 5);
  CHECK(gated.err.find("gated") != std::string::npos);
  CHECK(gated.err.find("HF_TOKEN") != std::string::npos);

  auto env_token = env;
  env_token["HF_TOKEN"] = "secret";
  auto ok = run_memfit({"estimate", "meta-llama/Gated"}, env_token);
  CHECK(ok.exit_code == 0);
  CHECK(hub.requests().back().authorization == "Bearer secret");

  auto missing = run_memfit({"estimate", "org/does-not-exist"}, env);
  CHECK(missing.exit_code == 6);
  CHECK(missing.err.find("does not exist") != std::string::npos);

  auto no_config = run_memfit({"estimate", "org/no-config"}, env);
  CHECK(no_config.exit_code == 7);
  CHECK(no_config.err.find("config.json") != std::string::npos);

  auto no_library = run_memfit({"estimate", "org/no-library"}, env);
  CHECK(no_library.exit_code == 8);
  CHECK(no_library.err.find("--library_name") != std::string::npos);
  CHECK(run_memfit({"estimate", "org/no-library", "--library_name", "transformers"}, env)
            .exit_code == 0);

  auto diffusers = run_memfit({"estimate", "org/diffusers"}, env);
  CHECK(diffusers.exit_code == 4);

  auto down = run_memfit({"estimate", "org/x"}, {{"HF_ENDPOINT", "http://127.0.0.1:1"}});
  CHECK(down.exit_code == 9);
  CHECK(down.err.find("cannot reach") != std::string::npos);
}

TEST_CASE("Hub: a redirect to another host never carries the token") {
  MockHub hub, cdn;
  const std::string cfg = memfit::test::fixture("configs/gpt2.json");
  hub.add_gated_model("org/m", "secret", "transformers", {});
  cdn.add_model("org/m", "transformers", {{"config.json", cfg}});
  hub.add_redirect("/org/m/resolve/main/config.json",
                   cdn.endpoint() + "/org/m/resolve/main/config.json");
  auto r = run_memfit({"estimate", "org/m"}, {{"HF_ENDPOINT", hub.endpoint()}, {"HF_TOKEN", "secret"}});
  CHECK(r.exit_code == 0);
  const auto seen = cdn.requests();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].authorization.empty());
  CHECK(hub.requests().back().authorization == "Bearer secret");
}

TEST_CASE("Hub: responses are cached and used offline") {
  MockHub hub;
  hub.add_model("org/m", "transformers", {{"config.json", memfit::test::fixture("configs/gpt2.json")}});
  char tmpl[] = "/tmp/memfit-cache-XXXXXX";
  const std::string cache = mkdtemp(tmpl);
  CHECK(run_memfit({"estimate", "org/m"}, {{"HF_ENDPOINT", hub.endpoint()}, {"MEMFIT_CACHE", cache}})
            .exit_code == 0);
  auto offline = run_memfit({"estimate", "org/m"}, {{"HF_ENDPOINT", hub.endpoint()},
                                                    {"MEMFIT_CACHE", cache},
                                                    {"HF_HUB_OFFLINE", "1"}});
  CHECK(offline.exit_code == 0);
  CHECK(hub.requests().size() == 2);  // the offline run did not ask the Hub
  auto cold = run_memfit({"estimate", "org/other"}, {{"HF_ENDPOINT", hub.endpoint()},
                                                     {"MEMFIT_CACHE", cache},
                                                     {"HF_HUB_OFFLINE", "1"}});
  CHECK(cold.exit_code == 9);
  std::filesystem::remove_all(cache);
}
