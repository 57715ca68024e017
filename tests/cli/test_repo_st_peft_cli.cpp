// `memfit estimate FOLDER|ORG/NAME` on a sentence-transformers model and a PEFT adapter (core/repo,
// native/cli/repo_command.cpp): tiny real files in a folder, and the same repos on the mock Hub
// (listing by /api/models/ID?blobs=true, headers by Range), a PEFT adapter and its base model
// both served. Expected numbers are the arithmetic of the shapes written here.
#include <doctest/doctest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "exit_codes.h"
#include "memfit/format/safetensors.h"
#include "support/mock_hub.h"
#include "support/run_process.h"
#include "support/scratch_files.h"

using memfit::test::MockHub;
using memfit::test::run_memfit;
using namespace memfit;

namespace {

using Specs = std::vector<std::pair<std::string, std::pair<DType, Shape>>>;

// A whole safetensors file: the header, then zeros for the data.
std::string st_file(const Specs& specs) {
  std::vector<safetensors::TensorEntry> entries;
  for (const auto& [name, s] : specs) {
    safetensors::TensorEntry e;
    e.name = name;
    e.dtype = s.first;
    e.shape = s.second;
    entries.push_back(e);
  }
  entries = safetensors::layout(entries);
  const std::uint64_t data = entries.empty() ? 0 : entries.back().end;
  return safetensors::write_header(entries, {}) + std::string(static_cast<std::size_t>(data), '\0');
}

using Files = std::map<std::string, std::string>;

std::string write_folder(const std::string& what, const Files& files) {
  const std::string dir = test::scratch_dir(what);
  for (const auto& [path, bytes] : files) {
    std::filesystem::create_directories(std::filesystem::path(dir + "/" + path).parent_path());
    test::write_file(dir + "/" + path, bytes);
  }
  return dir;
}

// The Hub's model info with every file and its size (what list_repo reads).
std::string hub_info(const std::string& id, const Files& files) {
  nlohmann::json j = {{"id", id}, {"siblings", nlohmann::json::array()}};
  for (const auto& [path, bytes] : files) j["siblings"].push_back({{"rfilename", path}, {"size", bytes.size()}});
  return j.dump();
}

void serve(MockHub& hub, const std::string& id, const Files& files) {
  hub.add_model(id, "", files);
  hub.add_raw("/api/models/" + id, 200, hub_info(id, files));
}

nlohmann::json run_json(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}) {
  auto r = run_memfit(args, env);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

// A sentence-transformers model: BERT-shaped Transformer weights (two tensors stand for them),
// mean pooling over 32, Dense 32 → 8 without bias, Normalize.
Files st_files() {
  return {
      {"modules.json", R"([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"},
        {"idx": 3, "name": "3", "path": "3_Normalize", "type": "sentence_transformers.models.Normalize"}])"},
      {"config.json", R"({"model_type": "bert", "hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
        "intermediate_size": 64, "vocab_size": 50, "max_position_embeddings": 128, "type_vocab_size": 2})"},
      {"sentence_bert_config.json", R"({"max_seq_length": 100, "do_lower_case": false})"},
      {"model.safetensors", st_file({{"embeddings.word_embeddings.weight", {DType::kF32, {50, 32}}},
                                     {"pooler.dense.weight", {DType::kF32, {32, 32}}}})},
      {"1_Pooling/config.json", R"({"word_embedding_dimension": 32, "pooling_mode_mean_tokens": true})"},
      {"2_Dense/config.json", R"({"in_features": 32, "out_features": 8, "bias": false,
        "activation_function": "torch.nn.modules.linear.Identity"})"},
      {"2_Dense/model.safetensors", st_file({{"linear.weight", {DType::kF32, {8, 32}}}})},
      {"3_Normalize/.keep", ""},
      {"README.md", "# an embedding model"},
  };
}

void check_st(const nlohmann::json& j) {
  CHECK(j["kind"] == "sentence-transformers");
  const auto& f = j["fields"];
  // 50·32 + 32·32 = 2624 float32; Dense 8·32 = 256 float32.
  CHECK(f["modules"][0]["parameters"] == 2624);
  CHECK(f["modules"][2]["parameters"] == 256);
  CHECK(f["parameters"] == 2624 + 256);
  CHECK(f["bytes"] == (2624 + 256) * 4);
  CHECK(f["embedding_dimension"] == 8);
  CHECK(f["max_seq_length"] == 100);
  CHECK(j["tables"][0]["rows"].size() == 4);
}

// A tiny Llama base (H=64, I=128, 2 layers, 2 KV heads of 16, vocab 256, bf16) and a LoRA adapter
// of r=4 on q_proj and v_proj, saved with its header.
const char* kLlama = R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64,
  "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
  "vocab_size": 256, "max_position_embeddings": 128, "tie_word_embeddings": false, "torch_dtype": "bfloat16"})";
constexpr std::uint64_t kLlamaParams = 16384 + 2 * (4096 + 2048 + 2048 + 4096 + 3 * 8192 + 128) + 64 + 16384;

Files adapter_files(const std::string& base) {
  Specs specs;
  for (int l = 0; l < 2; ++l) {
    const std::string p = "base_model.model.model.layers." + std::to_string(l) + ".self_attn.";
    specs.push_back({p + "q_proj.lora_A.weight", {DType::kF32, {4, 64}}});
    specs.push_back({p + "q_proj.lora_B.weight", {DType::kF32, {64, 4}}});
    specs.push_back({p + "v_proj.lora_A.weight", {DType::kF32, {4, 64}}});
    specs.push_back({p + "v_proj.lora_B.weight", {DType::kF32, {32, 4}}});
  }
  return {{"adapter_config.json", R"({"peft_type": "LORA", "task_type": "CAUSAL_LM", "base_model_name_or_path": ")" +
                                      base + R"(", "r": 4, "lora_alpha": 8, "target_modules": ["q_proj", "v_proj"]})"},
          {"adapter_model.safetensors", st_file(specs)},
          {"README.md", "# a LoRA"}};
}

// Per layer: q 4·(64+64) + v 4·(64+32) = 896; two layers, float32.
constexpr std::uint64_t kAdapterParams = 2 * 896;

void check_peft(const nlohmann::json& j) {
  CHECK(j["kind"] == "peft");
  const auto& f = j["fields"];
  CHECK(f["base"]["parameters"] == kLlamaParams);
  CHECK(f["base"]["bytes"] == kLlamaParams * 2);
  CHECK(f["adapter"]["source"] == "header");
  CHECK(f["adapter"]["parameters"] == kAdapterParams);
  CHECK(f["adapter"]["bytes"] == kAdapterParams * 4);
  CHECK(f["adapter"]["modules_wrapped"] == 4);
  CHECK(f["total"]["bytes"] == kLlamaParams * 2 + kAdapterParams * 4);
  CHECK(f["merged"]["bytes"] == kLlamaParams * 2);
}

}  // namespace

TEST_CASE("estimate FOLDER: a sentence-transformers model") {
  const std::string dir = write_folder("st", st_files());
  check_st(run_json({"estimate", dir, "--json"}));
  // --dtype casts every floating tensor.
  CHECK(run_json({"estimate", dir, "--dtype", "float16", "--json"})["fields"]["bytes"] == (2624 + 256) * 2);
  // The table and summary lines as printed.
  const auto r = run_memfit({"estimate", dir});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("Pooling (mean)") != std::string::npos);
  CHECK(r.out.find("embedding dimension: 8 (from Dense)") != std::string::npos);
  CHECK(r.out.find("max_seq_length: 100 (sentence_bert_config.json)") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("estimate ORG/NAME: a sentence-transformers model on the Hub, headers by Range") {
  MockHub hub;
  const Files files = st_files();
  serve(hub, "org/st", files);
  check_st(run_json({"estimate", "org/st", "--json"}, {{"HF_ENDPOINT", hub.endpoint()}}));
  // The weights were read by Range (their header), never whole.
  bool ranged = false;
  for (const auto& q : hub.requests())
    if (q.path.find("model.safetensors") != std::string::npos) {
      CHECK_FALSE(q.range.empty());
      ranged = true;
    }
  CHECK(ranged);
}

TEST_CASE("estimate ORG/NAME: a PEFT adapter and its base model, both on the Hub") {
  MockHub hub;
  serve(hub, "org/lora", adapter_files("meta/tiny-llama"));
  serve(hub, "meta/tiny-llama", {{"config.json", kLlama}});
  const auto j = run_json({"estimate", "org/lora", "--json"}, {{"HF_ENDPOINT", hub.endpoint()}});
  check_peft(j);
  const auto text = run_memfit({"estimate", "org/lora"}, {{"HF_ENDPOINT", hub.endpoint()}});
  REQUIRE_MESSAGE(text.exit_code == 0, text.err);
  CHECK(text.out.find("merged (merge_and_unload)") != std::string::npos);
  CHECK(text.out.find("model.layers.*.self_attn.q_proj") != std::string::npos);
}

TEST_CASE("estimate ORG/NAME: a PEFT adapter whose base model is not on the Hub") {
  MockHub hub;
  serve(hub, "org/lora", adapter_files("meta/gone"));
  const auto r = run_memfit({"estimate", "org/lora"}, {{"HF_ENDPOINT", hub.endpoint()}});
  CHECK(r.exit_code == cli::kExitRepoNotFound);
  CHECK(r.err.find("meta/gone") != std::string::npos);
}

TEST_CASE("estimate FOLDER: a PEFT adapter whose base is a local folder, or a path that is neither") {
  const std::string base = write_folder("peft-base", {{"config.json", kLlama}});
  const std::string adapter = write_folder("peft", adapter_files(base));
  check_peft(run_json({"estimate", adapter, "--json"}));

  const std::string lost = write_folder("peft-lost", adapter_files("/nonexistent/memfit/base"));
  const auto r = run_memfit({"estimate", lost});
  CHECK(r.exit_code == cli::kExitFile);
  CHECK(r.err.find("neither a folder nor a Hub id") != std::string::npos);
  for (const auto& d : {base, adapter, lost}) std::filesystem::remove_all(d);
}
