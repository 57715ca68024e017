// Exact sizes from safetensors headers: local files/folders, the Hub over HTTP Range,
// `memfit inspect`, `memfit validate`, and hostile files.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "exit_codes.h"
#include "support/mock_hub.h"
#include "support/reference.h"
#include "support/run_process.h"

using memfit::test::MockHub;
using memfit::test::run_memfit;
namespace fs = std::filesystem;

namespace {

std::string golden(const std::string& rel) { return *memfit::test::reference_dir() + "/golden/" + rel; }

std::string temp_dir() {
  char tmpl[] = "/tmp/memfit-ck-XXXXXX";
  return mkdtemp(tmpl);
}

void write(const std::string& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

std::string le64(std::uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return s;
}

}  // namespace

TEST_CASE("inspect --json lists every tensor of a sharded folder") {
  if (!memfit::test::reference_dir()) return memfit::test::skip_loudly("inspect golden shards");
  auto r = run_memfit({"inspect", golden("tiny-llama/sharded"), "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["tensors"].size() == 39);
  CHECK(j["metadata"]["format"] == "pt");
  CHECK(j["index"]["total_size"] == 1251584);  // from the index, checked against the shards
  bool found = false;
  for (const auto& t : j["tensors"])
    if (t["name"] == "lm_head.weight") {
      found = true;
      CHECK(t["dtype"] == "F32");
      CHECK(t["shape"] == nlohmann::json::array({1000, 64}));
      CHECK(t["file"] == "model-00003-of-00003.safetensors");  // golden README: shard 3
    }
  CHECK(found);
}

TEST_CASE("estimate a folder: safetensors headers by default, the config when asked") {
  if (!memfit::test::reference_dir()) return memfit::test::skip_loudly("estimate golden folder");
  auto exact = run_memfit({"estimate", golden("tiny-llama/fp16"), "--json", "--dtypes", "float16"});
  REQUIRE_MESSAGE(exact.exit_code == 0, exact.err);
  auto j = nlohmann::json::parse(exact.out);
  CHECK(j["source"] == "checkpoint");
  CHECK(j["stored_bytes"] == 1251584 / 2);
  CHECK(j["comparison"]["matches"] == true);
  auto cfg = run_memfit({"estimate", golden("tiny-llama/fp16"), "--json", "--source", "config"});
  REQUIRE(cfg.exit_code == 0);
  CHECK(nlohmann::json::parse(cfg.out)["source"] == "config");
  auto file = run_memfit({"estimate", golden("tiny-gpt2/model.safetensors"), "--json"});
  REQUIRE_MESSAGE(file.exit_code == 0, file.err);
  CHECK(nlohmann::json::parse(file.out)["stored_bytes"] == 1089024);
}

TEST_CASE("validate: exit 0 on a match, 11 and names on a mismatch") {
  if (!memfit::test::reference_dir()) return memfit::test::skip_loudly("validate golden");
  CHECK(run_memfit({"validate", golden("tiny-llama/config.json"), golden("tiny-llama/sharded")})
            .exit_code == 0);
  auto bad = run_memfit({"validate", golden("tiny-gpt2/config.json"), golden("tiny-llama/model.safetensors")});
  CHECK(bad.exit_code == 11);
  CHECK(bad.out.find("missing:    transformer.wte.weight") != std::string::npos);
  CHECK(bad.out.find("unexpected: model.norm.weight") != std::string::npos);
}

TEST_CASE("hostile and broken checkpoints: one clear line, a non-zero exit, no crash") {
  const std::string dir = temp_dir();
  write(dir + "/huge.safetensors", le64(std::uint64_t{1} << 63) + "{}");
  write(dir + "/spaces.safetensors", le64(64) + std::string(64, ' '));
  write(dir + "/short.safetensors", le64(1000) + "{\"a\":");
  write(dir + "/trailing.safetensors",
        le64(56) + R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}     )" + "\x01\x02\x03\x04XX");
  for (const char* f : {"huge", "spaces", "short", "trailing"}) {
    auto r = run_memfit({"inspect", dir + "/" + f + ".safetensors"});
    INFO(f << ": " << r.err);
    CHECK(r.exit_code == 3);
    CHECK(r.err.rfind("memfit: error: " + dir + "/" + f + ".safetensors: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  // A sharded index whose shard is missing, or that names a file outside the folder.
  fs::create_directory(dir + "/sharded");
  write(dir + "/sharded/model.safetensors.index.json",
        R"({"metadata":{"total_size":4},"weight_map":{"a":"model-00001-of-00002.safetensors"}})");
  auto missing = run_memfit({"inspect", dir + "/sharded"});
  CHECK(missing.exit_code == 10);
  CHECK(missing.err.find("model-00001-of-00002.safetensors") != std::string::npos);
  write(dir + "/sharded/model.safetensors.index.json", R"({"weight_map":{"a":"../../etc/passwd"}})");
  auto escape = run_memfit({"inspect", dir + "/sharded"});
  CHECK(escape.exit_code == 3);
  CHECK(escape.err.find("not a file inside the checkpoint folder") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("Hub --exact: headers by HTTP Range, sharded, token kept home on redirects") {
  if (!memfit::test::reference_dir()) return memfit::test::skip_loudly("Hub exact golden");
  MockHub hub, cdn;
  const std::string dir = golden("tiny-llama/sharded");
  std::map<std::string, std::string> files{
      {"config.json", memfit::test::read_text(dir + "/config.json")},
      {"model.safetensors.index.json", memfit::test::read_text(dir + "/model.safetensors.index.json")}};
  hub.add_gated_model("org/tiny-llama", "tok", "transformers", files);
  std::map<std::string, std::string> shards;
  for (const char* s : {"model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
                        "model-00003-of-00003.safetensors"}) {
    shards[s] = memfit::test::read_text(dir + "/" + s);
    hub.add_redirect(std::string("/org/tiny-llama/resolve/main/") + s,
                     cdn.endpoint() + "/org/tiny-llama/resolve/main/" + s);
  }
  cdn.add_model("org/tiny-llama", "transformers", shards);
  auto r = run_memfit({"estimate", "org/tiny-llama", "--exact", "--json", "--dtypes", "float32"},
                      {{"HF_ENDPOINT", hub.endpoint()}, {"HF_TOKEN", "tok"}});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["source"] == "checkpoint");
  CHECK(j["stored_bytes"] == 1251584);
  CHECK(j["comparison"]["matches"] == true);
  const auto seen = cdn.requests();
  REQUIRE(seen.size() == 3);  // one ranged request per shard: the 64 KiB range holds each header
  for (const auto& s : seen) {
    CHECK(s.authorization.empty());
    CHECK(s.range == "bytes=0-65535");
  }
}

TEST_CASE("Hub --exact: a server that ignores Range is read only as far as asked") {
  if (!memfit::test::reference_dir()) return memfit::test::skip_loudly("Hub exact golden");
  MockHub hub;
  const std::string dir = golden("tiny-gpt2");
  const std::string config = memfit::test::read_text(dir + "/config.json");
  hub.add_model("org/no-range", "transformers", {{"config.json", config}});
  // A real 1 MB checkpoint, answered with 200 and the whole body whatever Range says.
  const std::string checkpoint = memfit::test::read_text(dir + "/model.safetensors");
  REQUIRE(checkpoint.size() > (1u << 20));
  hub.add_raw("/org/no-range/resolve/main/model.safetensors", 200, checkpoint, /*honor_range=*/false);
  auto r = run_memfit({"estimate", "org/no-range", "--exact", "--json"}, {{"HF_ENDPOINT", hub.endpoint()}});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);  // the header lies in the first 64 KiB: kept, the rest unread
  CHECK(nlohmann::json::parse(r.out)["comparison"]["matches"] == true);
  for (const auto& s : hub.requests())
    if (s.path == "/org/no-range/resolve/main/model.safetensors") CHECK(s.range == "bytes=0-65535");

  // A header longer than the first 64 KiB needs a range further in: refused, never read up to.
  const std::string meta = R"({"__metadata__":{"pad":")" + std::string(100000, 'x') + R"("}})";
  std::string big(8, '\0');
  for (int i = 0; i < 8; ++i) big[static_cast<std::size_t>(i)] = static_cast<char>((meta.size() >> (8 * i)) & 0xff);
  hub.add_model("org/no-range-big", "transformers", {{"config.json", config}});
  hub.add_raw("/org/no-range-big/resolve/main/model.safetensors", 200, big + meta, /*honor_range=*/false);
  auto big_r = run_memfit({"estimate", "org/no-range-big", "--exact", "--json"}, {{"HF_ENDPOINT", hub.endpoint()}});
  CHECK(big_r.exit_code == memfit::cli::kExitNetwork);
  CHECK_MESSAGE(big_r.err.find("the server ignored the Range request") != std::string::npos, big_r.err);
  CHECK(big_r.err.find("never downloads them whole") != std::string::npos);
}

TEST_CASE("Hub --exact: a range answered with 200 and a Content-Range is read as the range it is") {
  // cpp-httplib does this when a handler sets 200 explicitly: the bytes asked, status 200.
  if (!memfit::test::reference_dir()) return memfit::test::skip_loudly("Hub exact golden");
  MockHub hub;
  const std::string dir = golden("tiny-gpt2");
  hub.add_model("org/range-200", "transformers", {{"config.json", memfit::test::read_text(dir + "/config.json")}});
  hub.add_raw("/org/range-200/resolve/main/model.safetensors", 200,
              memfit::test::read_text(dir + "/model.safetensors"));
  auto r = run_memfit({"estimate", "org/range-200", "--exact", "--json"}, {{"HF_ENDPOINT", hub.endpoint()}});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["source"] == "checkpoint");
  CHECK(j["comparison"]["matches"] == true);
}
