// Broken and mismatched checkpoints: clear errors naming the file/tensor, before any weight is
// allocated; --allow-missing / --ignore-unexpected; a cancelled load keeps nothing.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "failure.h"
#include "support/reference.h"
#include "support/torch_bin_builder.h"
#include "torch_test_support.h"

namespace memfit::test {
namespace fs = std::filesystem;

namespace {

// Runs fn, which must throw a Failure; returns it.
template <typename Fn>
Failure expect_error(Fn&& fn) {
  try {
    fn();
  } catch (const Failure& e) {
    return e;
  }
  FAIL("no error was raised");
  return {FailureKind::kInternal, ""};
}

torchrt::LoadPlan plan_for(const std::string& checkpoint, const std::string& config = "",
                           bool allow_missing = false, bool ignore_unexpected = false) {
  torchrt::LoadRequest req;
  req.checkpoint = checkpoint;
  req.config = config;
  req.allow_missing = allow_missing;
  req.ignore_unexpected = ignore_unexpected;
  return torchrt::make_load_plan(req, torchrt::device_inventory());
}

void copy_folder(const std::string& from, const std::string& to) {
  fs::create_directories(to);
  for (const auto& e : fs::directory_iterator(from))
    if (e.is_regular_file()) fs::copy_file(e.path(), fs::path(to) / e.path().filename());
}

// tiny-gpt2's config with one field changed.
std::string gpt2_config_with(const std::string& dir, const std::string& key, int value) {
  auto j = nlohmann::json::parse(read_text(*golden_dir() + "/tiny-gpt2/config.json"));
  j[key] = value;
  const std::string path = dir + "/config.json";
  std::ofstream(path) << j.dump();
  return path;
}

}  // namespace

TEST_CASE("hostile: a truncated shard is refused, naming the shard") {
  const auto golden = golden_dir();
  if (!golden) return skip_loudly("hostile checkpoints");
  TempDir tmp;
  copy_folder(*golden + "/tiny-gpt2/sharded", tmp.path);
  const auto shard = fs::path(tmp.path) / "model-00002-of-00003.safetensors";
  REQUIRE(fs::exists(shard));
  fs::resize_file(shard, fs::file_size(shard) - 100);
  const Failure e = expect_error([&] { plan_for(tmp.path); });
  CHECK(e.kind == FailureKind::kInvalidInput);
  CHECK(e.message.find("model-00002-of-00003.safetensors") != std::string::npos);
}

TEST_CASE("hostile: a shard truncated after loading fails the forward by name, with no crash") {
  // Disk weights are read (pread), not faulted in through the mapping, where a truncated file
  // would end the process with SIGBUS.
  const auto golden = golden_dir();
  if (!golden) return skip_loudly("hostile checkpoints");
  TempDir tmp;
  copy_folder(*golden + "/tiny-gpt2/sharded", tmp.path);
  const Loaded m = load(tmp.path, R"({"": "disk"})");
  const auto ids = golden_input(golden_json("tiny-gpt2"), "A");
  torchrt::Executor exec(*m.model, *m.program);
  const auto shard = fs::path(tmp.path) / "model-00003-of-00003.safetensors";
  const at::Tensor before = exec.forward(ids);  // also leaves the next forward's first stages in flight
  fs::resize_file(shard, 4096);
  const Failure e = expect_error([&] { exec.forward(ids); });
  CHECK(e.kind == FailureKind::kFile);
  CHECK(e.message.find("model-00003-of-00003.safetensors") != std::string::npos);
  // The failed forward dropped what it had in flight: with the shard back, the same bits.
  fs::copy_file(*golden + "/tiny-gpt2/sharded/model-00003-of-00003.safetensors", shard,
                fs::copy_options::overwrite_existing);
  CHECK(bitwise_equal(exec.forward(ids), before));
}

TEST_CASE("hostile: a token id past the vocabulary of a disk embedding is refused by name") {
  const auto golden = golden_dir();
  if (!golden) return skip_loudly("hostile checkpoints");
  const Loaded m = load(*golden + "/tiny-llama", R"({"": "disk"})");
  torchrt::Executor exec(*m.model, *m.program);
  const auto ids = at::tensor(std::vector<std::int64_t>{1, 2, 1000}, at::TensorOptions().dtype(at::kLong)).view({1, 3});
  const Failure e = expect_error([&] { exec.forward(ids); });
  CHECK(e.kind == FailureKind::kUsage);
  CHECK(e.message.find("token id 1000") != std::string::npos);
  CHECK(e.message.find("model.embed_tokens.weight") != std::string::npos);
}

TEST_CASE("hostile: a missing shard is refused, naming the shard") {
  const auto golden = golden_dir();
  if (!golden) return skip_loudly("hostile checkpoints");
  TempDir tmp;
  copy_folder(*golden + "/tiny-gpt2/sharded", tmp.path);
  fs::remove(fs::path(tmp.path) / "model-00003-of-00003.safetensors");
  const Failure e = expect_error([&] { plan_for(tmp.path); });
  CHECK(e.kind == FailureKind::kFile);
  CHECK(e.message.find("model-00003-of-00003.safetensors") != std::string::npos);
}

TEST_CASE("hostile: a tensor that reaches past the end of the file is refused") {
  const auto golden = golden_dir();
  if (!golden) return skip_loudly("hostile checkpoints");
  TempDir tmp;
  // A header that promises 64 floats; the file holds 16 of them.
  const std::string header = R"({"transformer.wte.weight":{"dtype":"F32","shape":[8,8],"data_offsets":[0,256]}})";
  std::string bytes(8, '\0');
  const std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  bytes += header + std::string(64, '\0');
  const std::string file = tmp.path + "/model.safetensors";
  std::ofstream(file, std::ios::binary) << bytes;
  fs::copy_file(*golden + "/tiny-gpt2/config.json", tmp.path + "/config.json");
  const Failure e = expect_error([&] { plan_for(file); });
  CHECK(e.kind == FailureKind::kInvalidInput);
  CHECK(e.message.find("model.safetensors") != std::string::npos);
}

TEST_CASE("hostile: a .bin whose pickle calls os.system is refused by name and runs nothing") {
  const auto golden = golden_dir();
  if (!golden) return skip_loudly("hostile checkpoints");
  TempDir tmp;
  // If anything executed this pickle, os.system would create the marker file.
  const std::string marker = tmp.path + "/pwned";
  const std::string command = "touch " + marker;
  std::string pickle = "\x80\x02" "cos\nsystem\nX";
  for (int i = 0; i < 4; ++i) pickle += static_cast<char>((command.size() >> (8 * i)) & 0xff);
  pickle += command + "\x85R.";  // TUPLE1, REDUCE, STOP
  std::ofstream(tmp.path + "/pytorch_model.bin", std::ios::binary)
      << torch_bin("pytorch_model", pickle, {});
  fs::copy_file(*golden + "/tiny-gpt2/config.json", tmp.path + "/config.json");
  const Failure e = expect_error([&] { plan_for(tmp.path); });
  CHECK(e.kind == FailureKind::kInvalidInput);
  CHECK(e.message.find("'os.system' is not allowed") != std::string::npos);
  CHECK(e.message.find("pytorch_model.bin") != std::string::npos);
  CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("validation: missing and unexpected tensors fail before loading, by name; flags relax it") {
  const auto golden = golden_dir();
  if (!golden) return skip_loudly("validation");
  TempDir tmp;
  const std::string weights = *golden + "/tiny-gpt2/model.safetensors";
  {  // five layers in the config, four in the checkpoint
    const std::string cfg = gpt2_config_with(tmp.path, "n_layer", 5);
    const Failure e = expect_error([&] { plan_for(weights, cfg); });
    CHECK(e.kind == FailureKind::kMismatch);
    CHECK(e.message.find("missing: 'transformer.h.4.") != std::string::npos);
    const auto lp = plan_for(weights, cfg, /*allow_missing=*/true);
    CHECK(lp.comparison.missing.size() == 12);
    // It loads; the forward names the first weight it lacks.
    const auto model = torchrt::load_model(lp);
    const auto program = torchrt::make_program("gpt2", model->plan.model, model->plan.tree);
    torchrt::Executor exec(*model, *program);
    const auto ids = at::tensor(std::vector<std::int64_t>{1, 2, 3}, at::TensorOptions().dtype(at::kLong)).view({1, 3});
    try {
      exec.forward(ids);
      FAIL("forward ran without transformer.h.4");
    } catch (const std::exception& ex) {
      CHECK(std::string(ex.what()).find("transformer.h.4.") != std::string::npos);
    }
  }
  {  // three layers in the config: h.3 is unexpected
    const std::string cfg = gpt2_config_with(tmp.path, "n_layer", 3);
    const Failure e = expect_error([&] { plan_for(weights, cfg); });
    CHECK(e.kind == FailureKind::kMismatch);
    CHECK(e.message.find("unexpected: 'transformer.h.3.") != std::string::npos);
    const auto lp = plan_for(weights, cfg, false, /*ignore_unexpected=*/true);
    CHECK(lp.skipped.size() == 12);
  }
  {  // a wider model: shapes differ, named with expected vs got
    const std::string cfg = gpt2_config_with(tmp.path, "n_embd", 128);
    const Failure e = expect_error([&] { plan_for(weights, cfg, true, true); });
    CHECK(e.kind == FailureKind::kMismatch);
    CHECK(e.message.find("has shape [192] in the checkpoint; the config implies [384]") != std::string::npos);
  }
}

TEST_CASE("device maps: keys that name nothing, uncovered tensors and absent GPUs are refused") {
  const auto golden = golden_dir();
  if (!golden) return skip_loudly("device map checks");
  torchrt::LoadRequest req;
  req.checkpoint = *golden + "/tiny-gpt2";
  torchrt::DeviceInventory cpu_only;
  req.device_map = R"({"transformer.h.0": "cpu"})";
  CHECK_THROWS_AS(torchrt::make_load_plan(req, cpu_only), Failure);
  req.device_map = R"({"": "cpu", "transformer.nope": "disk"})";
  CHECK_THROWS_AS(torchrt::make_load_plan(req, cpu_only), Failure);
  req.device_map = R"({"": 0})";
  const Failure e = expect_error([&] { torchrt::make_load_plan(req, cpu_only); });
  CHECK(e.message.find("GPU 0") != std::string::npos);
}

TEST_CASE("cancel: a progress callback that returns false stops the load and keeps nothing") {
  const auto golden = golden_dir();
  if (!golden) return skip_loudly("cancel");
  const auto rss_before = torchrt::read_process_memory().rss_bytes;
  (void)rss_before;
  torchrt::LoadRequest req;
  req.checkpoint = *golden + "/tiny-llama/sharded";
  std::vector<std::pair<std::uint64_t, std::uint64_t>> calls;
  torchrt::LoadOptions opt;
  opt.progress = [&](std::uint64_t done, std::uint64_t total) {
    calls.emplace_back(done, total);
    return calls.size() < 5;
  };
  const Failure e = expect_error(
      [&] { torchrt::load_model(torchrt::make_load_plan(req, torchrt::device_inventory()), opt); });
  CHECK(e.kind == FailureKind::kCancelled);
  CHECK(calls.size() == 5);
  CHECK(calls.back().first < calls.back().second);
  // Without cancelling, the last call reports done == total.
  calls.clear();
  opt.progress = [&](std::uint64_t done, std::uint64_t total) {
    calls.emplace_back(done, total);
    return true;
  };
  torchrt::load_model(torchrt::make_load_plan(req, torchrt::device_inventory()), opt);
  REQUIRE(!calls.empty());
  CHECK(calls.back().first == calls.back().second);
  CHECK(calls.back().second == 1'251'584);  // the index's total_size
}

}  // namespace memfit::test

namespace memfit::test {

TEST_CASE("cancel: a .bin load cancelled while writing its offload folder leaves no folder behind") {
  const auto golden = golden_dir();
  if (!golden) return skip_loudly("cancel with an offload folder");
  TempDir tmp;
  const std::string folder = tmp.path + "/offload";
  torchrt::LoadRequest req;
  req.checkpoint = *golden + "/tiny-gpt2/bin-sharded";
  req.device_map = R"({"": "disk"})";
  int calls = 0;
  torchrt::LoadOptions opt;
  opt.offload_folder = folder;
  opt.progress = [&](std::uint64_t, std::uint64_t) { return ++calls < 10; };
  try {
    torchrt::load_model(torchrt::make_load_plan(req, torchrt::device_inventory()), opt);
    FAIL("the load was not cancelled");
  } catch (const Failure& e) {
    CHECK(e.kind == FailureKind::kCancelled);
  }
  CHECK(calls == 10);
  CHECK_FALSE(fs::exists(folder));
  CHECK(fs::is_empty(tmp.path));  // no temporary sibling either
  // Uncancelled, the folder is complete: Accelerate's index.json + one .dat per tensor.
  opt.progress = nullptr;
  const auto model = torchrt::load_model(torchrt::make_load_plan(req, torchrt::device_inventory()), opt);
  CHECK(fs::exists(folder + "/index.json"));
  CHECK(fs::exists(folder + "/transformer.h.0.attn.c_attn.weight.dat"));
  // Without --offload-folder, a .bin on disk is refused with a hint.
  opt.offload_folder.clear();
  try {
    torchrt::load_model(torchrt::make_load_plan(req, torchrt::device_inventory()), opt);
    FAIL("a .bin was placed on disk without an offload folder");
  } catch (const Failure& e) {
    CHECK(e.message.find("--offload-folder") != std::string::npos);
  }
}

}  // namespace memfit::test
