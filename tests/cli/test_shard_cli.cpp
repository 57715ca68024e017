// `memfit shard`: transformers' shard_checkpoint + safetensors' layout, byte for byte against the
// golden files written by the real save_pretrained; atomic output; hostile inputs.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "support/reference.h"
#include "support/run_process.h"
#include "support/torch_bin_builder.h"

using memfit::test::run_memfit;
namespace fs = std::filesystem;

namespace {

std::string golden(const std::string& rel) { return *memfit::test::reference_dir() + "/golden/" + rel; }

std::string temp_dir() {
  char tmpl[] = "/tmp/memfit-shard-XXXXXX";
  return mkdtemp(tmpl);
}

std::string slurp(const std::string& path) { return memfit::test::read_text(path); }

void write(const std::string& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

// Only OUT's parent's own entries: OUT must be absent and no OUT.tmp-* left behind.
std::size_t entries_in(const std::string& dir) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += !e.path().empty();
  return n;
}

}  // namespace

TEST_CASE("shard: model.safetensors at 400KB reproduces the golden sharded/ folder byte for byte") {
  if (!memfit::test::reference_dir()) return memfit::test::skip_loudly("shard golden safetensors");
  const std::string out = temp_dir() + "/out";
  auto r = run_memfit({"shard", golden("tiny-gpt2/model.safetensors"), out, "--max-shard-size", "400KB"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("GPT2LMHeadModel's state_dict order") != std::string::npos);
  for (const char* f : {"model.safetensors.index.json", "model-00001-of-00003.safetensors",
                        "model-00002-of-00003.safetensors", "model-00003-of-00003.safetensors"})
    CHECK_MESSAGE(slurp(out + "/" + f) == slurp(golden(std::string("tiny-gpt2/sharded/") + f)), f);
  CHECK(fs::exists(out + "/config.json"));
}

TEST_CASE("shard: .bin (single and sharded) → the golden safetensors, tied alias dropped") {
  if (!memfit::test::reference_dir()) return memfit::test::skip_loudly("shard golden .bin");
  const std::string parent = temp_dir();
  auto r = run_memfit({"shard", golden("tiny-gpt2/bin"), parent + "/a", "--max-shard-size", "400KB", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["source"] == "bin");
  REQUIRE(j["dropped_aliases"].size() == 1);
  CHECK(j["dropped_aliases"][0]["name"] == "lm_head.weight");
  CHECK(j["dropped_aliases"][0]["alias_of"] == "transformer.wte.weight");
  CHECK(j["total_size"] == 1089024);  // golden README
  for (const char* f : {"model.safetensors.index.json", "model-00001-of-00003.safetensors",
                        "model-00002-of-00003.safetensors", "model-00003-of-00003.safetensors"})
    CHECK_MESSAGE(slurp(parent + "/a/" + f) == slurp(golden(std::string("tiny-gpt2/sharded/") + f)), f);

  r = run_memfit({"shard", golden("tiny-gpt2/bin-sharded"), parent + "/b"});  // default 5GB: one file
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(slurp(parent + "/b/model.safetensors") == slurp(golden("tiny-gpt2/model.safetensors")));
  CHECK_FALSE(fs::exists(parent + "/b/model.safetensors.index.json"));
  r = run_memfit({"shard", golden("tiny-gpt2/bin/pytorch_model.bin"), parent + "/c"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(slurp(parent + "/c/model.safetensors") == slurp(golden("tiny-gpt2/model.safetensors")));
}

TEST_CASE("shard: non-contiguous .bin views are written in C order; shared storages that differ stay") {
  const std::string parent = temp_dir();
  using memfit::test::PickledTensor;
  PickledTensor t{"t", "FloatStorage", "0", 6, 0, {3, 2}, {1, 3}};  // the transpose of a [2,3]
  PickledTensor row{"row", "FloatStorage", "0", 6, 3, {3}, {1}};    // second row of the [2,3]
  write(parent + "/m.bin", memfit::test::torch_bin("m", memfit::test::state_dict_pickle({t, row}),
                                                   {{"0", memfit::test::f32_bytes(6)}}));
  auto r = run_memfit({"shard", parent + "/m.bin", parent + "/out", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(nlohmann::json::parse(r.out)["materialised_non_contiguous"] == 1);
  const std::string st = slurp(parent + "/out/model.safetensors");
  const std::uint64_t n = static_cast<unsigned char>(st[0]) | (static_cast<std::uint64_t>(static_cast<unsigned char>(st[1])) << 8);
  const auto header = nlohmann::json::parse(st.substr(8, n));
  const std::string data = st.substr(8 + n);
  auto tensor = [&](const std::string& name) {
    const auto& o = header[name]["data_offsets"];
    return data.substr(o[0].get<std::size_t>(), o[1].get<std::size_t>() - o[0].get<std::size_t>());
  };
  // [[0,1,2],[3,4,5]]ᵀ = [[0,3],[1,4],[2,5]]
  std::string want;
  for (float v : {0.f, 3.f, 1.f, 4.f, 2.f, 5.f}) want += memfit::test::f32_bytes(1, v);
  CHECK(tensor("t") == want);
  CHECK(tensor("row") == memfit::test::f32_bytes(3, 3));
}

TEST_CASE("shard: failures leave no output") {
  const std::string parent = temp_dir();
  SUBCASE("a missing shard") {
    if (!memfit::test::reference_dir()) return memfit::test::skip_loudly("shard missing golden shard");
    fs::create_directories(parent + "/in");
    for (const auto& e : fs::directory_iterator(golden("tiny-gpt2/bin-sharded")))
      if (e.path().filename() != "pytorch_model-00002-of-00003.bin")
        fs::copy_file(e.path(), parent + "/in/" + e.path().filename().string());
    auto r = run_memfit({"shard", parent + "/in", parent + "/out"});
    CHECK(r.exit_code == 10);
    CHECK(r.err.find("shard 'pytorch_model-00002-of-00003.bin' listed in the index is missing") != std::string::npos);
    CHECK_FALSE(fs::exists(parent + "/out"));
    CHECK(entries_in(parent) == 1);
  }
  SUBCASE("a forbidden global") {
    static const char evil[] = "\x80\x02" "cos\nsystem\nX\x02\x00\x00\x00idR.";
    write(parent + "/evil.bin", memfit::test::torch_bin("evil", std::string(evil, sizeof evil - 1), {}));
    auto r = run_memfit({"shard", parent + "/evil.bin", parent + "/out"});
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("the global 'os.system' is not allowed") != std::string::npos);
    CHECK_FALSE(fs::exists(parent + "/out"));
    CHECK(entries_in(parent) == 1);
  }
  SUBCASE("a truncated .bin") {
    const std::string bin = memfit::test::torch_bin(
        "m", memfit::test::state_dict_pickle({{"w", "FloatStorage", "0", 4, 0, {4}, {1}}}),
        {{"0", memfit::test::f32_bytes(4)}});
    write(parent + "/m.bin", bin.substr(0, bin.size() - 30));
    auto r = run_memfit({"shard", parent + "/m.bin", parent + "/out"});
    CHECK(r.exit_code == 4);  // not a zip archive (any more): unsupported, with the reason
    CHECK(r.err.find("not a zip archive") != std::string::npos);
    CHECK_FALSE(fs::exists(parent + "/out"));
  }
  SUBCASE("usage errors") {
    fs::create_directories(parent + "/taken/x");
    CHECK(run_memfit({"shard", parent + "/nothing.bin", parent + "/out"}).exit_code == 10);
    auto r = run_memfit({"shard", parent + "/nothing.bin", parent + "/taken"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("already exists") != std::string::npos);
    CHECK(run_memfit({"shard", parent + "/nothing.bin", parent + "/o", "--max-shard-size", "lots"}).exit_code == 2);
  }
}
