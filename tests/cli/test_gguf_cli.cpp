// `memfit inspect` and `memfit estimate` on GGUF models: local files, split files, the Hub by
// HTTP Range (header only) and a Hub repo of quantizations, with llama.cpp's flags.
#include <doctest/doctest.h>

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "exit_codes.h"
#include "support/gguf_builder.h"
#include "support/mock_hub.h"
#include "support/reference.h"
#include "support/run_process.h"
#include "support/scratch_files.h"

using memfit::test::MockHub;
using memfit::test::run_memfit;
using namespace memfit;
using gguf::ValueType;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Llama-3-8B's attention as its GGUF metadata gives it (32 blocks, 8 KV heads of 128), with
// one small tensor: the KV cache is the metadata's alone.
std::string llama3_8b_metadata_only() {
  test::GgufSpec s = test::llama_gguf(1, 64, 4, 4, 128, 128, 0);
  s.tensors.resize(1);
  for (auto& kv : s.metadata) {
    if (kv.key == "llama.block_count") kv.value.u = 32;
    if (kv.key == "llama.embedding_length") kv.value.u = 4096;
    if (kv.key == "llama.attention.head_count") kv.value.u = 32;
    if (kv.key == "llama.attention.head_count_kv") kv.value.u = 8;
    if (kv.key == "llama.context_length") kv.value.u = 8192;
    if (kv.key == "llama.feed_forward_length") kv.value.u = 14336;
  }
  s.metadata.push_back({"llama.vocab_size", gguf::make_uint(ValueType::kUint32, 128256)});
  return test::build_gguf(s);
}

std::string write_temp(const std::string& name, const std::string& bytes) {
  const std::string dir = test::scratch_dir("gguf");
  test::write_file(dir + "/" + name, bytes);
  return dir + "/" + name;
}

nlohmann::json run_json(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}) {
  auto r = run_memfit(args, env);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("GGUF inspect --json: the file llama.cpp's converter wrote, its metadata and tensors") {
  const auto ref = test::reference_dir();
  if (!ref) return test::skip_loudly("GGUF inspect: no reference dir");
  const auto j = run_json({"inspect", *ref + "/golden/llamacpp/qwen3/model.gguf", "--json"});
  CHECK(j["format"] == "gguf");
  CHECK(j["metadata"]["general.architecture"]["value"] == "qwen3");
  CHECK(j["metadata"]["general.architecture"]["type"] == "string");
  CHECK(j["model"]["architecture"] == "qwen3");
  // The converter wrote every tensor of the HF checkpoint, F32: the same bytes as model.safetensors'.
  const auto st = run_json({"inspect", *ref + "/golden/llamacpp/qwen3/model.safetensors", "--json"});
  std::uint64_t st_bytes = 0;
  for (const auto& t : st["tensors"]) st_bytes += t["bytes"].get<std::uint64_t>();
  CHECK(j["totals"]["bytes"] == st_bytes);
  CHECK(j["tensors"].size() == st["tensors"].size());
  const auto cfg = nlohmann::json::parse(test::read_text(*ref + "/golden/llamacpp/qwen3/config.json"));
  CHECK(j["model"]["block_count"] == cfg["num_hidden_layers"]);
  CHECK(j["model"]["head_count_kv"] == cfg["num_key_value_heads"]);
  CHECK(j["model"]["head_dim"] == cfg["head_dim"]);
}

TEST_CASE("GGUF estimate: Llama-3-8B's KV cache as llama.cpp sizes it (f16 and q8_0)") {
  const std::string path = write_temp("llama3.gguf", llama3_8b_metadata_only());
  // llama.cpp at -c 8192 logs "KV buffer size = 1024.00 MiB" (K 512, V 512) for Llama-3-8B in f16.
  auto j = run_json({"estimate", path, "--ctx-size", "8192", "--json"});
  CHECK(j["kv_cache"]["k"].get<double>() == 512 * kMiB);
  CHECK(j["kv_cache"]["v"].get<double>() == 512 * kMiB);
  CHECK(j["options"]["n_ctx"] == 8192);
  // q8_0: 34 bytes per 32 values, "K (q8_0): 272.00 MiB, V (q8_0): 272.00 MiB".
  j = run_json({"estimate", path, "-c", "8192", "-ctk", "q8_0", "-ctv", "q8_0", "--json"});
  CHECK(j["kv_cache"]["k"].get<double>() == 272 * kMiB);
  CHECK(j["kv_cache"]["v"].get<double>() == 272 * kMiB);
  CHECK(j["compute_approximate"] == true);
  // Not a cache type llama.cpp accepts.
  auto bad = run_memfit({"estimate", path, "--cache-type-k", "q4_K"});
  CHECK(bad.exit_code == cli::kExitUsage);
  CHECK(bad.err.find("q8_0") != std::string::npos);
}

TEST_CASE("GGUF estimate: --gpu-layers places the output layer first, then the last blocks; token_embd stays on the CPU") {
  test::GgufSpec s = test::llama_gguf(4, 256, 4, 2, 512, 512, 8);
  const std::string path = write_temp("tiny.gguf", test::build_gguf(s));
  const std::uint64_t embd = 512 / 32 * 34 * 256;       // token_embd q8_0 [256, 512]
  const std::uint64_t out = embd + 256 * 4;             // output q8_0 + output_norm f32
  const auto j0 = run_json({"estimate", path, "-ngl", "0", "--json"});
  const std::uint64_t block = j0["layers"][0]["weights"].get<std::uint64_t>();
  CHECK(j0["gpu"]["weights"] == 0);
  CHECK(j0["input_bytes"] == embd);
  CHECK(j0["output_bytes"] == out);
  const auto j1 = run_json({"estimate", path, "--gpu-layers", "1", "--json"});
  CHECK(j1["output_gpu"] == true);
  CHECK(j1["gpu"]["weights"].get<double>() == static_cast<double>(out));
  CHECK(j1["layers"][3]["device"] == "cpu");
  const auto j2 = run_json({"estimate", path, "--gpu-layers", "2", "--json"});
  CHECK(j2["layers"][3]["device"] == "gpu");
  CHECK(j2["layers"][2]["device"] == "cpu");
  CHECK(j2["gpu"]["weights"].get<double>() == static_cast<double>(out + block));
  const auto all = run_json({"estimate", path, "--json"});
  CHECK(all["options"]["gpu_layers"] == 5);
  CHECK(all["gpu"]["weights"].get<double>() == static_cast<double>(out + 4 * block));
  CHECK(all["cpu"]["weights"].get<double>() == static_cast<double>(embd));
  CHECK(all["weights"] == embd + out + 4 * block);
  // The largest --gpu-layers that fits: its GPU total fits the --vram, one more layer does not.
  const double vram = all["gpu"]["total"].get<double>() - 1;
  const auto fit = run_json({"estimate", path, "--vram", std::to_string(static_cast<std::uint64_t>(vram)), "--json"});
  const int best = fit["max_gpu_layers"].get<int>();
  CHECK(best == 4);
  CHECK(fit["fits"] == false);
  const auto at = run_json({"estimate", path, "-ngl", std::to_string(best), "--json"});
  CHECK(at["gpu"]["total"].get<double>() <= vram);
}

TEST_CASE("GGUF: split files count as one model, from any of them") {
  const std::string dir = test::scratch_dir("gguf-split");
  test::GgufSpec whole = test::llama_gguf(2, 64, 2, 2, 64, 128, 0);
  test::GgufSpec a = whole, b = whole;
  a.tensors.assign(whole.tensors.begin(), whole.tensors.begin() + 6);
  b.tensors.assign(whole.tensors.begin() + 6, whole.tensors.end());
  b.metadata.clear();
  auto split_keys = [&](test::GgufSpec& s, int no) {
    s.metadata.push_back({"split.no", gguf::make_uint(ValueType::kUint16, static_cast<std::uint64_t>(no))});
    s.metadata.push_back({"split.count", gguf::make_uint(ValueType::kUint16, 2)});
    s.metadata.push_back({"split.tensors.count", gguf::make_int(ValueType::kInt32, static_cast<std::int64_t>(whole.tensors.size()))});
  };
  split_keys(a, 0);
  split_keys(b, 1);
  test::write_file(dir + "/m-00001-of-00002.gguf", test::build_gguf(a));
  test::write_file(dir + "/m-00002-of-00002.gguf", test::build_gguf(b));
  const auto j = run_json({"estimate", dir + "/m-00002-of-00002.gguf", "--json"});
  CHECK(j["files"].size() == 2);
  std::uint64_t bytes = 0;
  gguf::layout(whole.tensors);
  for (const auto& t : whole.tensors) bytes += t.nbytes;
  CHECK(j["weights"] == bytes);
  const auto ins = run_json({"inspect", dir + "/m-00001-of-00002.gguf", "--json"});
  CHECK(ins["tensors"].size() == whole.tensors.size());
  // A missing split is named.
  std::filesystem::remove(dir + "/m-00002-of-00002.gguf");
  auto r = run_memfit({"estimate", dir + "/m-00001-of-00002.gguf"});
  CHECK(r.exit_code == cli::kExitFile);
  CHECK(r.err.find("m-00002-of-00002.gguf") != std::string::npos);
}

TEST_CASE("GGUF on the Hub: ORG/NAME:FILE reads the header by Range, more ranges for a large one, never the whole file") {
  test::GgufSpec s = test::llama_gguf(2, 256, 4, 4, 20000, 512, 8);
  std::vector<gguf::Value> tokens;
  for (int i = 0; i < 20000; ++i) tokens.push_back(gguf::make_string("token-number-" + std::to_string(i)));
  s.metadata.push_back({"tokenizer.ggml.tokens", gguf::make_array(ValueType::kString, tokens)});
  const std::string bytes = test::build_gguf(s);
  REQUIRE(bytes.size() > 4 * 1024 * 1024);
  MockHub hub;
  hub.add_model("org/q", "", {{"q8.gguf", bytes}});
  const auto j = run_json({"inspect", "org/q:q8.gguf", "--json"}, {{"HF_ENDPOINT", hub.endpoint()}});
  CHECK(j["model"]["vocab"] == 20000);
  CHECK(j["metadata"]["tokenizer.ggml.tokens"]["value"].size() == 20000);
  const std::uint64_t header = j["files"][0]["header_size"].get<std::uint64_t>();
  REQUIRE(header > 64 * 1024);  // more than the first range
  int ranged = 0;
  for (const auto& r : hub.requests()) {
    if (r.path != "/org/q/resolve/main/q8.gguf") continue;
    CHECK_FALSE(r.range.empty());
    ++ranged;
  }
  CHECK(ranged >= 2);
  const auto est = run_json({"estimate", "org/q:q8.gguf", "--ctx-size", "1024", "--json"}, {{"HF_ENDPOINT", hub.endpoint()}});
  CHECK(est["weights"] == j["totals"]["bytes"]);
}

TEST_CASE("GGUF repo on the Hub: one row per quantization (splits as one), sizes and fits at --ctx-size") {
  test::GgufSpec s = test::llama_gguf(2, 256, 4, 4, 512, 512, 8);
  const std::string q8 = test::build_gguf(s);
  MockHub hub;
  hub.add_model("org/ggufs", "", {{"m-Q8_0.gguf", q8}});
  hub.add_raw("/api/models/org/ggufs", 200,
              R"({"id":"org/ggufs","siblings":[{"rfilename":"README.md","size":10},)"
              R"({"rfilename":"m-Q8_0.gguf","size":)" + std::to_string(q8.size()) + R"(},)"
              R"({"rfilename":"m-F16-00001-of-00002.gguf","size":3000000000},)"
              R"({"rfilename":"m-F16-00002-of-00002.gguf","size":2000000000}]})");
  const auto j = run_json({"inspect", "org/ggufs", "--vram", "4GiB", "--ctx-size", "2048", "--json"},
                          {{"HF_ENDPOINT", hub.endpoint()}});
  CHECK(j["format"] == "gguf-repo");
  REQUIRE(j["models"].size() == 2);
  CHECK(j["models"][0]["file"] == "m-Q8_0.gguf");
  CHECK(j["models"][0]["size"] == q8.size());
  CHECK(j["models"][0]["fits"] == true);
  CHECK(j["models"][1]["file"] == "m-F16-00001-of-00002.gguf");
  CHECK(j["models"][1]["files"] == 2);
  CHECK(j["models"][1]["size"] == 5000000000ull);
  CHECK(j["models"][1]["fits"] == false);
  CHECK(j["kv_cache"].get<double>() > 0);
}

TEST_CASE("GGUF repo: `memfit estimate ORG/NAME` prints core's quantization table, one header read by Range") {
  test::GgufSpec s = test::llama_gguf(2, 256, 4, 4, 512, 512, 8);
  const std::string q4 = test::build_gguf(s);
  MockHub hub;
  hub.add_model("org/tiny-GGUF", "gguf", {{"tiny-Q4_K_M.gguf", q4}});
  hub.add_raw("/api/models/org/tiny-GGUF", 200,
              R"({"id":"org/tiny-GGUF","library_name":"gguf","siblings":[{"rfilename":"README.md","size":10},)"
              R"({"rfilename":"config.json","size":2},)"  // a GGUF repo that also has a config: library_name decides
              R"({"rfilename":"tiny-Q4_K_M.gguf","size":)" + std::to_string(q4.size()) + R"(},)"
              R"({"rfilename":"tiny-Q8_0.gguf","size":9000000000},)"
              R"({"rfilename":"mmproj-tiny-f16.gguf","size":1000}]})");
  const std::map<std::string, std::string> env = {{"HF_ENDPOINT", hub.endpoint()}};
  auto r = run_memfit({"estimate", "org/tiny-GGUF", "--vram", "4GiB"}, env);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("quantizations at --ctx-size 4096") != std::string::npos);
  CHECK(r.out.find("tiny-Q4_K_M.gguf (header read)") != std::string::npos);
  CHECK(r.out.find("tiny-Q8_0.gguf") != std::string::npos);
  CHECK(r.out.find("vision projector") != std::string::npos);
  // Only Q4_K_M's header, by Range; nothing of the others.
  for (const auto& q : hub.requests()) {
    CHECK(q.path.find("tiny-Q8_0") == std::string::npos);
    CHECK(q.path.find("mmproj") == std::string::npos);
    CHECK(q.path.find("config.json") == std::string::npos);
    if (q.path.find("tiny-Q4_K_M") != std::string::npos) CHECK_FALSE(q.range.empty());
  }
  const auto j = run_json({"estimate", "org/tiny-GGUF", "--vram", "4GiB", "--context", "2048", "--json"}, env);
  CHECK(j["kind"] == "gguf");
  const auto& models = j["fields"]["models"];
  REQUIRE(models.size() == 2);
  CHECK(models[0]["file"] == "tiny-Q4_K_M.gguf");
  CHECK(models[0]["fits"] == true);
  CHECK(models[0]["max_gpu_layers"] == 3);
  CHECK(models[1]["fits"] == false);
  CHECK(j["fields"]["ctx_size"] == 2048);
  // `inspect` gives the same rows (one implementation in core).
  const auto ins = run_json({"inspect", "org/tiny-GGUF", "--vram", "4GiB", "--ctx-size", "2048", "--json"}, env);
  CHECK(ins["format"] == "gguf-repo");
  CHECK(ins["models"] == models);
}

TEST_CASE("GGUF repo: `memfit estimate FOLDER` of GGUF files reads the local header") {
  const std::string dir = test::scratch_dir("gguf-repo");
  test::write_file(dir + "/tiny-Q4_K_M.gguf", test::build_gguf(test::llama_gguf(2, 256, 4, 4, 512, 512, 8)));
  test::write_file(dir + "/tiny-F16.gguf", std::string(100, 'x'));  // not read: only the representative is
  const auto j = run_json({"estimate", dir, "--json"});
  CHECK(j["kind"] == "gguf");
  REQUIRE(j["fields"]["models"].size() == 2);
  CHECK(j["fields"]["models"][1]["file"] == "tiny-Q4_K_M.gguf");
  CHECK(j["fields"]["models"][1]["exact"] == true);
  CHECK(j["fields"]["model"]["block_count"] == 2);
}

TEST_CASE("GGUF hostile: a truncated file and a bad type fail with the file named, exit 3") {
  const std::string good = test::build_gguf(test::llama_gguf(1, 64, 2, 2, 64, 128, 0));
  const std::string path = write_temp("cut.gguf", good.substr(0, 100));
  auto r = run_memfit({"inspect", path});
  CHECK(r.exit_code == cli::kExitInvalidInput);
  CHECK(r.err.find("cut.gguf") != std::string::npos);
  test::GgufSpec bad = test::llama_gguf(1, 64, 2, 2, 64, 128, 0);
  const std::string bytes = test::build_gguf(bad);
  std::string patched = bytes;
  // The first tensor's type field: set it to a removed type (31, Q4_0_4_4).
  const std::size_t at = patched.find("token_embd.weight");
  REQUIRE(at != std::string::npos);
  patched[at + 17 + 4 + 16] = 31;
  const std::string p2 = write_temp("removed.gguf", patched);
  auto r2 = run_memfit({"estimate", p2});
  CHECK(r2.exit_code == cli::kExitUnsupported);
  CHECK(r2.err.find("Q4_0_4_4") != std::string::npos);
}

TEST_CASE("GGUF estimate (text): the VRAM/RAM split, the KV cache per layer, and the compute buffer said to be approximate") {
  const std::string path = write_temp("t.gguf", test::build_gguf(test::llama_gguf(2, 64, 2, 2, 64, 128, 0)));
  auto r = run_memfit({"estimate", path, "-ngl", "2", "-fa", "off", "--vram", "8GiB"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("VRAM") != std::string::npos);
  CHECK(r.out.find("blk.1    GPU") != std::string::npos);
  CHECK(r.out.find("blk.0    CPU") != std::string::npos);
  CHECK(r.out.find("compute buffer approximated") != std::string::npos);
  CHECK(r.out.find("n_head·n_ctx") != std::string::npos);  // flash attention off: the KQ scores
  CHECK(r.out.find("largest --gpu-layers that fits: 3 of 3") != std::string::npos);
}

TEST_CASE("GGUF estimate: transformers' flags are refused with llama.cpp's names") {
  const std::string path = write_temp("f.gguf", test::build_gguf(test::llama_gguf(1, 64, 2, 2, 64, 128, 0)));
  auto r = run_memfit({"estimate", path, "--context", "8192"});
  CHECK(r.exit_code == cli::kExitUsage);
  CHECK(r.err.find("--ctx-size (not --context)") != std::string::npos);
}
