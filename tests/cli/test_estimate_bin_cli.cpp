// `memfit estimate` from PyTorch .bin checkpoints: local files, folders and sharded indexes, and
// Hub repos read by HTTP Range only. The expected numbers are never memfit's own .bin output:
// each .bin estimate must equal the estimate of the same weights written as safetensors (which
// transformers' save_pretrained would write: the tied lm_head.weight dropped), and the
// config-derived tree's.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "memfit/format/zip_archive.h"
#include "support/mock_hub.h"
#include "support/reference.h"
#include "support/run_process.h"
#include "support/torch_bin_builder.h"

using memfit::test::MockHub;
using memfit::test::run_memfit;
namespace fs = std::filesystem;
namespace tb = memfit::test;

namespace {

std::string temp_dir() {
  char tmpl[] = "/tmp/memfit-estbin-XXXXXX";
  return mkdtemp(tmpl);
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A one-layer GPT-2 small enough to write by hand (transformers' GPT2LMHeadModel state dict).
const char* kConfig = R"({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_layer": 1,
  "n_embd": 8, "n_head": 2, "n_positions": 8, "vocab_size": 16, "torch_dtype": "float32"})";

struct Weight {
  std::string name;
  std::vector<std::uint64_t> shape;
};

const std::vector<Weight>& weights() {
  static const std::vector<Weight> w{
      {"transformer.wte.weight", {16, 8}},          {"transformer.wpe.weight", {8, 8}},
      {"transformer.h.0.ln_1.weight", {8}},         {"transformer.h.0.ln_1.bias", {8}},
      {"transformer.h.0.attn.c_attn.weight", {8, 24}}, {"transformer.h.0.attn.c_attn.bias", {24}},
      {"transformer.h.0.attn.c_proj.weight", {8, 8}},  {"transformer.h.0.attn.c_proj.bias", {8}},
      {"transformer.h.0.ln_2.weight", {8}},         {"transformer.h.0.ln_2.bias", {8}},
      {"transformer.h.0.mlp.c_fc.weight", {8, 32}}, {"transformer.h.0.mlp.c_fc.bias", {32}},
      {"transformer.h.0.mlp.c_proj.weight", {32, 8}}, {"transformer.h.0.mlp.c_proj.bias", {8}},
      {"transformer.ln_f.weight", {8}},             {"transformer.ln_f.bias", {8}}};
  return w;
}

std::uint64_t numel(const std::vector<std::uint64_t>& shape) {
  std::uint64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::vector<std::uint64_t> strides(const std::vector<std::uint64_t>& shape) {
  std::vector<std::uint64_t> s(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

// torch.save of weights()[first, last) (+ lm_head.weight viewing wte's storage when wte is in),
// one storage per tensor, keyed by its index in weights().
std::string bin_of(std::size_t first, std::size_t last, const std::string& stem) {
  std::vector<tb::PickledTensor> tensors;
  std::vector<std::pair<std::string, std::string>> storages;
  for (std::size_t i = first; i < last; ++i) {
    const auto& w = weights()[i];
    tensors.push_back(tb::tensor(w.name, std::to_string(i), numel(w.shape), w.shape, strides(w.shape)));
    storages.emplace_back(std::to_string(i), tb::f32_bytes(numel(w.shape), static_cast<float>(i)));
  }
  if (first == 0)
    tensors.push_back(tb::tensor("lm_head.weight", "0", 128, {16, 8}, {8, 1}));  // tied to wte
  return tb::torch_bin(stem, tb::state_dict_pickle(tensors), storages);
}

// The same weights as save_pretrained writes them in safetensors: lm_head.weight dropped.
std::string safetensors_of_weights() {
  nlohmann::ordered_json header = {{"__metadata__", {{"format", "pt"}}}};
  std::string data;
  for (std::size_t i = 0; i < weights().size(); ++i) {
    const auto& w = weights()[i];
    const std::string bytes = tb::f32_bytes(numel(w.shape), static_cast<float>(i));
    header[w.name] = {{"dtype", "F32"}, {"shape", w.shape}, {"data_offsets", {data.size(), data.size() + bytes.size()}}};
    data += bytes;
  }
  const std::string text = header.dump();
  std::string out;
  tb::put64(out, text.size());
  return out + text + data;
}

// pytorch_model.bin.index.json for two shards split after the first `split` weights.
std::string bin_index(std::size_t split) {
  nlohmann::ordered_json map = nlohmann::ordered_json::object();
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < weights().size(); ++i) {
    map[weights()[i].name] = i < split ? "pytorch_model-00001-of-00002.bin" : "pytorch_model-00002-of-00002.bin";
    total += numel(weights()[i].shape) * 4;
  }
  map["lm_head.weight"] = "pytorch_model-00001-of-00002.bin";
  return nlohmann::ordered_json{{"metadata", {{"total_size", total}}}, {"weight_map", map}}.dump();
}

constexpr std::size_t kSplit = 6;
std::string shard1() { return bin_of(0, kSplit, "pytorch_model-00001-of-00002"); }
std::string shard2() { return bin_of(kSplit, weights().size(), "pytorch_model-00002-of-00002"); }

nlohmann::json estimate_json(const std::vector<std::string>& args,
                             const std::map<std::string, std::string>& env = {}) {
  std::vector<std::string> full{"estimate"};
  full.insert(full.end(), args.begin(), args.end());
  full.insert(full.end(), {"--json", "--dtypes", "float32", "float16", "int4"});
  const auto r = run_memfit(full, env);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

// The sizes two estimates must agree on.
void check_same_sizes(const nlohmann::json& got, const nlohmann::json& want) {
  CHECK(got["parameters"] == want["parameters"]);
  CHECK(got["model_class"] == want["model_class"]);
  CHECK(got["largest_layer_names"] == want["largest_layer_names"]);
  CHECK(got["module_sizes"] == want["module_sizes"]);
  REQUIRE(got["rows"].size() == want["rows"].size());
  for (std::size_t i = 0; i < got["rows"].size(); ++i) {
    CHECK(got["rows"][i]["total_bytes"] == want["rows"][i]["total_bytes"]);
    CHECK(got["rows"][i]["largest_layer_bytes"] == want["rows"][i]["largest_layer_bytes"]);
    CHECK(got["rows"][i]["training_bytes"] == want["rows"][i]["training_bytes"]);
  }
}

// Folders: safetensors/ (the reference), bin/, bin-sharded/, both/ (safetensors + a different .bin).
std::string write_folders() {
  const std::string dir = temp_dir();
  for (const char* sub : {"safetensors", "bin", "bin-sharded", "both"}) {
    fs::create_directory(dir + "/" + sub);
    write(dir + "/" + sub + "/config.json", kConfig);
  }
  write(dir + "/safetensors/model.safetensors", safetensors_of_weights());
  write(dir + "/bin/pytorch_model.bin", bin_of(0, weights().size(), "pytorch_model"));
  write(dir + "/bin-sharded/pytorch_model-00001-of-00002.bin", shard1());
  write(dir + "/bin-sharded/pytorch_model-00002-of-00002.bin", shard2());
  write(dir + "/bin-sharded/pytorch_model.bin.index.json", bin_index(kSplit));
  write(dir + "/both/model.safetensors", safetensors_of_weights());
  write(dir + "/both/pytorch_model.bin", bin_of(0, 2, "pytorch_model"));  // only wte/wpe: would differ
  return dir;
}

// "bytes=A-B" or "bytes=-N" of a file of `size` bytes → [first, end).
std::pair<std::uint64_t, std::uint64_t> range_of(const std::string& header, std::uint64_t size) {
  REQUIRE(header.rfind("bytes=", 0) == 0);
  const std::string spec = header.substr(6);
  const auto dash = spec.find('-');
  REQUIRE(dash != std::string::npos);
  if (dash == 0) return {size - std::stoull(spec.substr(1)), size};
  return {std::stoull(spec.substr(0, dash)), std::stoull(spec.substr(dash + 1)) + 1};
}

// Every request the mock saw for `file` was a Range request that missed every storage entry (its
// local header and its bytes); returns how many there were.
std::size_t check_weights_never_requested(const MockHub& hub, const std::string& path,
                                          const std::string& bytes) {
  const auto archive = memfit::zip::read_archive(memfit::zip::memory_source(bytes, path));
  REQUIRE(archive.ok());
  std::size_t count = 0;
  for (const auto& seen : hub.requests()) {
    if (seen.path != path) continue;
    ++count;
    INFO(path << " " << seen.range);
    REQUIRE_FALSE(seen.range.empty());  // never the whole file
    const auto [first, end] = range_of(seen.range, bytes.size());
    for (const auto& e : archive->entries)
      if (e.name.find("/data/") != std::string::npos)
        CHECK_MESSAGE((end <= e.local_header_offset || first >= e.data_offset + e.compressed_size), e.name);
  }
  return count;
}

}  // namespace

TEST_CASE("estimate .bin: a folder, a sharded index and a file give the safetensors estimate") {
  const std::string dir = write_folders();
  const auto want = estimate_json({dir + "/safetensors"});
  REQUIRE(want["source"] == "checkpoint");
  CHECK(want["checkpoint_format"] == "safetensors");
  // The checkpoint agrees with the config's own tree, so both references are the same numbers.
  check_same_sizes(estimate_json({dir + "/safetensors", "--source", "config"}), want);
  for (const std::string target :
       {dir + "/bin", dir + "/bin/pytorch_model.bin", dir + "/bin-sharded",
        dir + "/bin-sharded/pytorch_model.bin.index.json"}) {
    INFO(target);
    const auto got = estimate_json({target});
    CHECK(got["source"] == "checkpoint");
    CHECK(got["checkpoint_format"] == "pytorch_bin");
    CHECK(got["stored_bytes"] == want["stored_bytes"]);  // lm_head.weight (tied) counted once
    CHECK(got["comparison"]["matches"] == true);
    check_same_sizes(got, want);
  }
  const auto text = run_memfit({"estimate", dir + "/bin-sharded"});
  REQUIRE_MESSAGE(text.exit_code == 0, text.err);
  CHECK(text.out.find("source: PyTorch .bin checkpoint (pickled state dict, exact), ") != std::string::npos);
  // --source config still ignores the checkpoint.
  CHECK(estimate_json({dir + "/bin", "--source", "config"})["source"] == "config");
  fs::remove_all(dir);
}

TEST_CASE("estimate .bin: safetensors win when a folder has both; training_args.bin is not weights") {
  const std::string dir = write_folders();
  const auto both = estimate_json({dir + "/both"});
  CHECK(both["checkpoint_format"] == "safetensors");
  check_same_sizes(both, estimate_json({dir + "/safetensors"}));
  // A Trainer output folder: config.json and training_args.bin (a pickled object, not weights).
  fs::create_directory(dir + "/trainer");
  write(dir + "/trainer/config.json", kConfig);
  static const char evil[] = "\x80\x02" "cos\nsystem\nX\x02\x00\x00\x00idR.";
  write(dir + "/trainer/training_args.bin", tb::torch_bin("training_args", std::string(evil, sizeof evil - 1), {}));
  CHECK(estimate_json({dir + "/trainer"})["source"] == "config");
  fs::remove_all(dir);
}

TEST_CASE("estimate .bin: a forbidden pickle global is refused by name, exit 3, nothing run") {
  const std::string dir = temp_dir();
  write(dir + "/config.json", kConfig);
  static const char evil[] = "\x80\x02" "cos\nsystem\nX\x02\x00\x00\x00idR.";
  write(dir + "/pytorch_model.bin", tb::torch_bin("pytorch_model", std::string(evil, sizeof evil - 1), {}));
  for (const std::string target : {dir, dir + "/pytorch_model.bin"}) {
    const auto r = run_memfit({"estimate", target});
    INFO(r.err);
    CHECK(r.exit_code == 3);
    CHECK(r.err.rfind("memfit: error: " + dir + "/pytorch_model.bin/pytorch_model/data.pkl: ", 0) == 0);
    CHECK(r.err.find("the global 'os.system' is not allowed") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  fs::remove_all(dir);
}

TEST_CASE("Hub --exact .bin: zip directory and data.pkl by Range, the weights never requested") {
  const std::string st_dir = temp_dir();
  write(st_dir + "/config.json", kConfig);
  write(st_dir + "/model.safetensors", safetensors_of_weights());
  const auto want = estimate_json({st_dir});
  MockHub hub;
  const std::string single = bin_of(0, weights().size(), "pytorch_model");
  hub.add_model("org/bin", "transformers", {{"config.json", kConfig}, {"pytorch_model.bin", single}});
  hub.add_model("org/sharded", "transformers",
                {{"config.json", kConfig},
                 {"pytorch_model.bin.index.json", bin_index(kSplit)},
                 {"pytorch_model-00001-of-00002.bin", shard1()},
                 {"pytorch_model-00002-of-00002.bin", shard2()}});
  const std::map<std::string, std::string> env{{"HF_ENDPOINT", hub.endpoint()}};
  for (const char* repo : {"org/bin", "org/sharded"}) {
    INFO(repo);
    const auto got = estimate_json({repo, "--exact"}, env);
    CHECK(got["source"] == "checkpoint");
    CHECK(got["checkpoint_format"] == "pytorch_bin");
    CHECK(got["stored_bytes"] == want["stored_bytes"]);
    CHECK(got["comparison"]["matches"] == true);
    check_same_sizes(got, want);
  }
  // Three requests per file: the last 98 bytes, the central directory, data.pkl's extent.
  CHECK(check_weights_never_requested(hub, "/org/bin/resolve/main/pytorch_model.bin", single) == 3);
  CHECK(check_weights_never_requested(hub, "/org/sharded/resolve/main/pytorch_model-00001-of-00002.bin",
                                      shard1()) == 3);
  CHECK(check_weights_never_requested(hub, "/org/sharded/resolve/main/pytorch_model-00002-of-00002.bin",
                                      shard2()) == 3);
  // --source checkpoint reads the Hub checkpoint as --exact does.
  CHECK(estimate_json({"org/bin", "--source", "checkpoint"}, env)["checkpoint_format"] == "pytorch_bin");
  fs::remove_all(st_dir);
}

TEST_CASE("Hub --exact .bin: hostile pickle, index mismatch, no weights at all") {
  MockHub hub;
  static const char evil[] = "\x80\x02" "cos\nsystem\nX\x02\x00\x00\x00idR.";
  hub.add_model("org/evil", "transformers",
                {{"config.json", kConfig},
                 {"pytorch_model.bin", tb::torch_bin("pytorch_model", std::string(evil, sizeof evil - 1), {})}});
  hub.add_model("org/mismatch", "transformers",
                {{"config.json", kConfig},
                 {"pytorch_model.bin.index.json", bin_index(kSplit + 1)},  // one tensor in the wrong shard
                 {"pytorch_model-00001-of-00002.bin", shard1()},
                 {"pytorch_model-00002-of-00002.bin", shard2()}});
  hub.add_model("org/none", "transformers", {{"config.json", kConfig}});
  const std::map<std::string, std::string> env{{"HF_ENDPOINT", hub.endpoint()}};

  auto r = run_memfit({"estimate", "org/evil", "--exact"}, env);
  CHECK(r.exit_code == 3);
  CHECK(r.err.rfind("memfit: error: org/evil/pytorch_model.bin/pytorch_model/data.pkl: ", 0) == 0);
  CHECK(r.err.find("the global 'os.system' is not allowed") != std::string::npos);

  r = run_memfit({"estimate", "org/mismatch", "--exact"}, env);
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("org/mismatch/pytorch_model.bin.index.json: weight_map puts tensor "
                   "'transformer.h.0.attn.c_proj.weight' in 'pytorch_model-00001-of-00002.bin', "
                   "which does not hold it") != std::string::npos);

  r = run_memfit({"estimate", "org/none", "--exact"}, env);
  CHECK(r.exit_code == 7);
  CHECK(r.err.find("model `org/none` has no weights memfit can read (model.safetensors.index.json, "
                   "model.safetensors, pytorch_model.bin.index.json or pytorch_model.bin)") != std::string::npos);
}

TEST_CASE("estimate .bin: the golden torch.save checkpoints, locally and over Range") {
  if (!memfit::test::reference_dir()) return memfit::test::skip_loudly("estimate golden .bin");
  const std::string g = *memfit::test::reference_dir() + "/golden/tiny-gpt2";
  const auto want = estimate_json({g});  // model.safetensors, written by save_pretrained
  REQUIRE(want["checkpoint_format"] == "safetensors");
  for (const char* sub : {"/bin", "/bin-sharded"}) {
    INFO(sub);
    const auto got = estimate_json({g + sub});
    CHECK(got["checkpoint_format"] == "pytorch_bin");
    CHECK(got["stored_bytes"] == want["stored_bytes"]);
    check_same_sizes(got, want);
  }
  MockHub hub;
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(g + "/bin-sharded"))
    files[e.path().filename().string()] = memfit::test::read_text(e.path().string());
  hub.add_model("org/tiny-gpt2", "transformers", files);
  const auto got = estimate_json({"org/tiny-gpt2", "--exact"}, {{"HF_ENDPOINT", hub.endpoint()}});
  CHECK(got["checkpoint_format"] == "pytorch_bin");
  check_same_sizes(got, want);
  for (int i = 1; i <= 3; ++i) {
    const std::string shard = "pytorch_model-0000" + std::to_string(i) + "-of-00003.bin";
    CHECK(check_weights_never_requested(hub, "/org/tiny-gpt2/resolve/main/" + shard, files.at(shard)) == 3);
  }
}
