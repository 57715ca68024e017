// .bin checkpoints on the CLI (inspect, validate) and through native/checkpoint/open_checkpoint.h,
// the interface the LibTorch loader maps tensors with.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "mapped_file.h"
#include "memfit/format/safetensors.h"
#include "open_checkpoint.h"
#include "support/reference.h"
#include "support/run_process.h"

using memfit::test::run_memfit;
namespace fs = std::filesystem;

namespace {

std::string golden(const std::string& rel) { return *memfit::test::reference_dir() + "/golden/" + rel; }

std::string temp_dir() {
  char tmpl[] = "/tmp/memfit-bin-XXXXXX";
  return mkdtemp(tmpl);
}

}  // namespace

TEST_CASE("bin checkpoint API: every tensor's file bytes equal the golden safetensors bytes") {
  if (!memfit::test::reference_dir()) return memfit::test::skip_loudly("bin checkpoint API golden");
  const std::string st_file = memfit::test::read_text(golden("tiny-gpt2/model.safetensors"));
  const auto h = memfit::safetensors::parse(st_file, st_file.size(), "model.safetensors");
  REQUIRE(h.ok());
  for (const char* dir : {"tiny-gpt2/bin", "tiny-gpt2/bin-sharded"}) {
    const memfit::checkpoint::Checkpoint ck = memfit::checkpoint::open_checkpoint(golden(dir));
    CHECK(ck.format == memfit::checkpoint::Format::kPytorchBin);
    CHECK(ck.tensors.size() == 53);
    for (const auto& t : ck.tensors) {
      const memfit::io::MappedFile f(ck.files[t.file].path);
      const std::string name = t.name == "lm_head.weight" ? "transformer.wte.weight" : t.name;
      const memfit::safetensors::TensorEntry* e = nullptr;
      for (const auto& x : h->tensors)
        if (x.name == name) e = &x;
      REQUIRE_MESSAGE(e, name);
      CHECK_MESSAGE(f.bytes(t.data_offset, t.span_bytes) == std::string_view(st_file).substr(h->data_start() + e->begin, e->nbytes()),
                    t.name);
    }
  }
  const auto sharded = memfit::checkpoint::open_checkpoint(golden("tiny-gpt2/bin-sharded"));
  REQUIRE(sharded.index);
  CHECK(sharded.index_name == "pytorch_model.bin.index.json");
  CHECK(sharded.files.size() == 3);
  for (const auto& t : sharded.tensors)
    if (t.name == "lm_head.weight") CHECK(sharded.files[t.file].name == "pytorch_model-00001-of-00003.bin");  // rides with wte
}

TEST_CASE("inspect and validate accept .bin files and folders") {
  if (!memfit::test::reference_dir()) return memfit::test::skip_loudly("inspect/validate golden .bin");
  auto r = run_memfit({"inspect", golden("tiny-gpt2/bin/pytorch_model.bin"), "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["format"] == "pytorch_bin");
  CHECK(j["offsets"] == "file");
  REQUIRE(j["tensors"].size() == 53);
  CHECK(j["tensors"][0]["name"] == "transformer.wte.weight");
  CHECK(j["tensors"][52]["name"] == "lm_head.weight");
  CHECK(j["tensors"][52]["data_offsets"] == j["tensors"][0]["data_offsets"]);
  CHECK(j["tensors"][52]["storage"] == "0");
  CHECK(j["tensors"][0]["shape"] == nlohmann::json::array({1000, 64}));

  r = run_memfit({"inspect", golden("tiny-gpt2/bin-sharded"), "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(nlohmann::json::parse(r.out)["index"]["total_size"] == 1089024);

  CHECK(run_memfit({"validate", golden("tiny-gpt2/config.json"), golden("tiny-gpt2/bin")}).exit_code == 0);
  CHECK(run_memfit({"validate", golden("tiny-gpt2/config.json"), golden("tiny-gpt2/bin-sharded")}).exit_code == 0);
  r = run_memfit({"validate", golden("tiny-llama/config.json"), golden("tiny-gpt2/bin")});
  CHECK(r.exit_code == 11);
}

TEST_CASE("a .bin index that disagrees with its shards is refused by name") {
  if (!memfit::test::reference_dir()) return memfit::test::skip_loudly(".bin index mismatch");
  const std::string dir = temp_dir();
  for (const auto& e : fs::directory_iterator(golden("tiny-gpt2/bin-sharded")))
    fs::copy_file(e.path(), dir + "/" + e.path().filename().string());
  auto index = nlohmann::json::parse(memfit::test::read_text(dir + "/pytorch_model.bin.index.json"));
  SUBCASE("a tensor put in the wrong shard") {
    index["weight_map"]["transformer.ln_f.bias"] = "pytorch_model-00001-of-00003.bin";
    std::ofstream(dir + "/pytorch_model.bin.index.json") << index.dump();
    auto r = run_memfit({"inspect", dir});
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("puts tensor 'transformer.ln_f.bias' in 'pytorch_model-00001-of-00003.bin', which does not "
                     "hold it (it is in 'pytorch_model-00003-of-00003.bin')") != std::string::npos);
  }
  SUBCASE("total_size off by one") {
    index["metadata"]["total_size"] = 1089025;
    std::ofstream(dir + "/pytorch_model.bin.index.json") << index.dump();
    auto r = run_memfit({"inspect", dir});
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("total_size is 1089025") != std::string::npos);
  }
}
