// `memfit validate CONFIG INDEX_JSON` against real Hub indexes (../shared/reference/real-hub),
// `memfit validate ORG/NAME` through the mock Hub, and `memfit estimate` of a model_type memfit
// does not know: exact weights from the checkpoint's headers, the KV cache marked approximate.
// Golden numbers are the real indexes' own names and metadata.total_size.
#include <doctest/doctest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "exit_codes.h"
#include "support/mock_hub.h"
#include "support/reference.h"
#include "support/run_process.h"
#include "support/scratch_files.h"

using memfit::test::MockHub;
using memfit::test::run_memfit;
namespace fs = std::filesystem;

namespace {

std::optional<std::string> real_hub() {
  auto ref = memfit::test::reference_dir();
  if (!ref || !memfit::test::file_exists(*ref + "/real-hub")) return std::nullopt;
  return *ref + "/real-hub";
}

// A safetensors file of F32 tensors (zeros), in the given order.
std::string safetensors_file(const std::vector<std::pair<std::string, std::vector<std::int64_t>>>& tensors) {
  nlohmann::ordered_json header;
  std::uint64_t offset = 0;
  for (const auto& [name, shape] : tensors) {
    std::uint64_t n = 4;
    for (auto d : shape) n *= static_cast<std::uint64_t>(d);
    header[name] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {offset, offset + n}}};
    offset += n;
  }
  const std::string text = header.dump();
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((text.size() >> (8 * i)) & 0xff);
  return out + text + std::string(offset, '\0');
}

struct HubRun {
  memfit::test::ProcessResult result;
  std::vector<memfit::test::SeenRequest> seen;
};

// `memfit validate REPO --json` against a mock Hub serving `files` of `folder`.
HubRun validate_on_hub(const std::string& repo, const std::string& folder, const std::vector<std::string>& files) {
  MockHub hub;
  std::map<std::string, std::string> served;
  for (const auto& f : files) served[f] = memfit::test::read_text(folder + "/" + f);
  hub.add_model(repo, "transformers", served);
  HubRun out{run_memfit({"validate", repo, "--json"}, {{"HF_ENDPOINT", hub.endpoint()}}), {}};
  out.seen = hub.requests();
  return out;
}

// A decoder of a model_type no family knows, with the generic keys transformers configs share.
const char* kUnknownConfig = R"({"model_type": "memfit_test_unknown", "architectures": ["UnknownForCausalLM"],
  "num_hidden_layers": 2, "hidden_size": 8, "num_attention_heads": 2, "num_key_value_heads": 1,
  "head_dim": 4, "intermediate_size": 16, "vocab_size": 16, "max_position_embeddings": 64,
  "torch_dtype": "float32"})";

std::string unknown_checkpoint() {
  return safetensors_file({{"model.embed_tokens.weight", {16, 8}},
                           {"model.layers.0.self_attn.q_proj.weight", {8, 8}},
                           {"model.layers.1.self_attn.q_proj.weight", {8, 8}},
                           {"model.norm.weight", {8}},
                           {"lm_head.weight", {16, 8}}});
}

}  // namespace

TEST_CASE("validate CONFIG INDEX_JSON: every real index of a supported family is ok, bytes equal") {
  const auto dir = real_hub();
  if (!dir) return memfit::test::skip_loudly("real-hub validate");
  std::size_t validated = 0;
  for (const auto& repo : memfit::test::list_dir(*dir)) {
    const std::string base = *dir + "/" + repo;
    if (!memfit::test::file_exists(base + "/model.safetensors.index.json")) continue;
    auto r = run_memfit({"validate", base + "/config.json", base + "/model.safetensors.index.json", "--json"});
    INFO(repo << ": " << r.err);
    if (r.exit_code == memfit::cli::kExitUnsupported) {
      MESSAGE("real-hub validate: " << repo << ": model_type not supported yet");
      continue;
    }
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    const auto index = nlohmann::json::parse(memfit::test::read_text(base + "/model.safetensors.index.json"));
    CHECK(j["ok"] == true);
    CHECK(j["missing"].empty());
    CHECK(j["unexpected"].empty());
    CHECK(j["shape_mismatches"].empty());  // names only: no headers
    CHECK(j["index_total_size"] == index["metadata"]["total_size"]);
    CHECK(j["expected_total_size"] == index["metadata"]["total_size"]);
    ++validated;
  }
  CHECK(validated >= 3);  // Llama 3.2, llama-7b, Mistral v0.3 at least
}

TEST_CASE("validate: a real index's 4.40-era rotary buffers are ignored, not unexpected") {
  const auto dir = real_hub();
  if (!dir) return memfit::test::skip_loudly("real-hub validate llama-7b");
  const std::string base = *dir + "/huggyllama--llama-7b";
  auto r = run_memfit({"validate", base + "/config.json", base + "/model.safetensors.index.json", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["ignored"].size() == 32);  // one model.layers.N.self_attn.rotary_emb.inv_freq per layer
  CHECK(j["ignored"][0].get<std::string>().find("rotary_emb.inv_freq") != std::string::npos);
}

TEST_CASE("validate: a doctored index fails with exit 11, names and bytes") {
  const auto dir = real_hub();
  if (!dir) return memfit::test::skip_loudly("real-hub validate mismatch");
  const std::string base = *dir + "/meta-llama--Llama-3.2-3B-Instruct";
  auto index = nlohmann::json::parse(memfit::test::read_text(base + "/model.safetensors.index.json"));
  const std::uint64_t total = index["metadata"]["total_size"];
  index["weight_map"].erase("model.norm.weight");
  index["weight_map"]["model.layers.0.mlp.extra.weight"] = "model-00001-of-00002.safetensors";
  index["metadata"]["total_size"] = total + 2;
  const std::string tmp = memfit::test::scratch_dir("validate");
  memfit::test::write_file(tmp + "/model.safetensors.index.json", index.dump());
  auto r = run_memfit({"validate", base + "/config.json", tmp + "/model.safetensors.index.json", "--json"});
  CHECK(r.exit_code == memfit::cli::kExitMismatch);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["ok"] == false);
  CHECK(j["missing"] == nlohmann::json::array({"model.norm.weight"}));
  CHECK(j["unexpected"] == nlohmann::json::array({"model.layers.0.mlp.extra.weight"}));
  CHECK(j["expected_total_size"] == total);
  CHECK(j["index_total_size"] == total + 2);
  auto text = run_memfit({"validate", base + "/config.json", tmp + "/model.safetensors.index.json"});
  CHECK(text.exit_code == memfit::cli::kExitMismatch);
  CHECK(text.out.find("missing:    model.norm.weight") != std::string::npos);
  CHECK(text.out.find("MISMATCH") != std::string::npos);
  fs::remove_all(tmp);
}

TEST_CASE("validate ORG/NAME: the config and the index from the (mock) Hub, no shard read") {
  const auto dir = real_hub();
  if (!dir) return memfit::test::skip_loudly("real-hub validate Hub");
  const HubRun run = validate_on_hub("mistralai/Mistral-7B-Instruct-v0.3", *dir + "/mistralai--Mistral-7B-Instruct-v0.3",
                                     {"config.json", "model.safetensors.index.json"});
  REQUIRE_MESSAGE(run.result.exit_code == 0, run.result.err);
  const auto j = nlohmann::json::parse(run.result.out);
  CHECK(j["ok"] == true);
  CHECK(j["expected_total_size"] == j["index_total_size"]);
  for (const auto& s : run.seen) {
    CHECK(s.path.find("-of-") == std::string::npos);  // no shard
    CHECK(s.range.empty());
  }
}

TEST_CASE("validate ORG/NAME without an index: model.safetensors's header by Range, shapes compared") {
  const auto ref = memfit::test::reference_dir();
  if (!ref) return memfit::test::skip_loudly("validate Hub single file");
  const HubRun run = validate_on_hub("org/tiny-gpt2", *ref + "/golden/tiny-gpt2", {"config.json", "model.safetensors"});
  REQUIRE_MESSAGE(run.result.exit_code == 0, run.result.err);
  const auto j = nlohmann::json::parse(run.result.out);
  CHECK(j["ok"] == true);
  CHECK(j["index_total_size"].is_null());  // a single file states no total
  CHECK(j["expected_total_size"] == 1089024);  // the file's tensors (test_checkpoint_cli: stored_bytes)
  bool ranged = false;
  for (const auto& s : run.seen)
    if (s.path == "/org/tiny-gpt2/resolve/main/model.safetensors") ranged = !s.range.empty();
  CHECK(ranged);
}

TEST_CASE("estimate: an unknown model_type falls back to the checkpoint's headers, KV marked approximate") {
  const std::string dir = memfit::test::scratch_dir("validate");
  memfit::test::write_file(dir + "/config.json", kUnknownConfig);
  memfit::test::write_file(dir + "/model.safetensors", unknown_checkpoint());
  auto r = run_memfit({"estimate", dir, "--json", "--context", "32"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["source"] == "checkpoint");
  CHECK(j["parameters"] == 16 * 8 * 2 + 8 * 8 * 2 + 8);
  REQUIRE(j["figures"].size() == 3);
  CHECK(j["figures"][0]["figure"] == "weights");
  CHECK(j["figures"][0]["exact"] == true);
  CHECK(j["figures"][1]["figure"] == "kv_cache");
  CHECK(j["figures"][1]["exact"] == false);
  CHECK(j["figures"][2]["figure"] == "activations");
  CHECK(j["figures"][2]["exact"] == false);
  auto table = run_memfit({"estimate", dir});
  REQUIRE_MESSAGE(table.exit_code == 0, table.err);
  CHECK(table.out.find("kv_cache: approximate") != std::string::npos);
  CHECK(table.out.find("weights: exact") != std::string::npos);

  // The Hub: headers by Range without --exact.
  MockHub hub;
  hub.add_model("org/unknown", "transformers", {{"config.json", kUnknownConfig}, {"model.safetensors", unknown_checkpoint()}});
  auto h = run_memfit({"estimate", "org/unknown", "--json"}, {{"HF_ENDPOINT", hub.endpoint()}});
  REQUIRE_MESSAGE(h.exit_code == 0, h.err);
  CHECK(nlohmann::json::parse(h.out)["source"] == "checkpoint");

  // Without weights: what was tried.
  hub.add_model("org/unknown-no-weights", "transformers", {{"config.json", kUnknownConfig}});
  auto none = run_memfit({"estimate", "org/unknown-no-weights"}, {{"HF_ENDPOINT", hub.endpoint()}});
  CHECK(none.exit_code == memfit::cli::kExitUnsupported);
  CHECK_MESSAGE(none.err.find("model_type 'memfit_test_unknown' is not supported") != std::string::npos, none.err);
  CHECK(none.err.find("model.safetensors.index.json") != std::string::npos);
  memfit::test::write_file(dir + "/config-only.json", kUnknownConfig);
  auto alone = run_memfit({"estimate", dir + "/config-only.json"});
  CHECK(alone.exit_code == memfit::cli::kExitUnsupported);
  CHECK_MESSAGE(alone.err.find("is a config alone") != std::string::npos, alone.err);
  fs::remove_all(dir);
}

TEST_CASE("estimate: a known family's figures are all exact") {
  const auto dir = real_hub();
  if (!dir) return memfit::test::skip_loudly("real-hub figures");
  auto r = run_memfit({"estimate", *dir + "/meta-llama--Llama-3.2-3B-Instruct/config.json", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto figures = nlohmann::json::parse(r.out)["figures"];
  REQUIRE(figures.size() == 3);
  for (const auto& f : figures) CHECK(f["exact"] == true);
  CHECK(figures[0]["basis"] == "config (transformers llama)");
}
