// `memfit generate ORG/NAME` (and forward / load): the golden tiny GPT-2 served by a mock Hub,
// downloaded into the Hugging Face cache layout, run as the local folder is; cached runs, offline
// runs, interrupted and misreported downloads, and the Hub's errors, each named.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "support/mock_hub.h"
#include "support/reference.h"
#include "support/run_process.h"
#include "torch_test_support.h"

namespace memfit::test {
namespace {
namespace fs = std::filesystem;

const std::string kRepo = "org/tiny-gpt2";
const std::string kRepoFolder = "models--org--tiny-gpt2";

// The repo as a Hub would hold it: the golden checkpoint, GPT-2's tokenizer, and files a run must
// not fetch (the .bin twin of the weights, an ONNX export, a README).
std::map<std::string, std::string> repo_files(const std::string& golden) {
  const std::string model = golden + "/tiny-gpt2", tok = golden + "/gpt2-tokenizer";
  return {{"config.json", read_text(model + "/config.json")},
          {"generation_config.json", read_text(model + "/generation_config.json")},
          {"model.safetensors", read_text(model + "/model.safetensors")},
          {"pytorch_model.bin", read_text(model + "/bin/pytorch_model.bin")},
          {"onnx/model.onnx", "not a run's file"},
          {"README.md", "# tiny"},
          {"vocab.json", read_text(tok + "/vocab.json")},
          {"merges.txt", read_text(tok + "/merges.txt")}};
}

std::map<std::string, std::string> hub_env(const MockHub& hub, const std::string& cache) {
  return {{"HF_ENDPOINT", hub.endpoint()}, {"HF_HUB_CACHE", cache}};
}

// The golden tiny GPT-2 served as org/tiny-gpt2, and an empty cache folder.
struct ServedModel {
  explicit ServedModel(const std::string& golden) : files(repo_files(golden)) { hub.add_model(kRepo, "transformers", files); }
  std::map<std::string, std::string> env() const { return hub_env(hub, cache.path); }
  const std::string& weights() const { return files.at("model.safetensors"); }
  fs::path folder() const { return fs::path(cache.path) / kRepoFolder; }  // models--org--tiny-gpt2

  std::map<std::string, std::string> files;
  MockHub hub;
  TempDir cache;
};

// The golden generation's prompt ids ("1,2,3") and its length.
struct Golden {
  std::string tokens;
  int max_new_tokens = 0;
  nlohmann::json new_token_ids;
};
Golden golden_generation() {
  const auto golden = golden_json("tiny-gpt2");
  const auto& gen = golden["generation"];
  Golden g;
  for (const auto& id : golden["inputs"][gen["input"].get<std::string>()]["input_ids"][0])
    g.tokens += (g.tokens.empty() ? "" : ",") + std::to_string(id.get<long long>());
  g.max_new_tokens = gen["max_new_tokens"].get<int>();
  g.new_token_ids = gen["new_token_ids"];
  return g;
}

std::vector<std::string> generate_args(const std::string& model, const Golden& g) {
  return {"generate", model, "--tokens", g.tokens, "--max-new-tokens", std::to_string(g.max_new_tokens),
          "--greedy", "--json", "--threads", "1"};
}

std::size_t count_requests(const std::vector<SeenRequest>& seen, std::size_t from, const std::string& suffix,
                           const std::string& method = "") {
  std::size_t n = 0;
  for (std::size_t i = from; i < seen.size(); ++i)
    if (seen[i].path.size() >= suffix.size() && seen[i].path.compare(seen[i].path.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        (method.empty() || seen[i].method == method))
      ++n;
  return n;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every file under `folder` whose name ends with `suffix`.
std::vector<std::string> files_ending(const fs::path& folder, const std::string& suffix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(folder, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(e.path().string());
  }
  return out;
}

}  // namespace

TEST_CASE("generate ORG/NAME: downloaded into the Hugging Face cache, the same ids as the folder, then no refetch") {
  const auto golden = golden_dir();
  if (!golden) return skip_loudly("memfit generate ORG/NAME");
  const Golden g = golden_generation();
  ServedModel served(*golden);
  MockHub& hub = served.hub;
  const auto& files = served.files;
  hub.serve_lfs_from_cdn(true);  // the weights come from another origin, as the Hub's CDN serves them
  auto env = served.env();
  env["HF_TOKEN"] = "secret";

  const ProcessResult local =
      run_memfit([&] { auto a = generate_args(*golden + "/tiny-gpt2", g); a.insert(a.end(), {"--tokenizer", *golden + "/gpt2-tokenizer"}); return a; }());
  REQUIRE(local.exit_code == 0);
  const ProcessResult first = run_memfit(generate_args(kRepo, g), env);
  CAPTURE(first.err);
  REQUIRE(first.exit_code == 0);
  const auto lj = nlohmann::json::parse(local.out), hj = nlohmann::json::parse(first.out);
  CHECK(hj["new_token_ids"] == g.new_token_ids);  // the golden ids, from transformers
  CHECK(hj["new_token_ids"] == lj["new_token_ids"]);
  CHECK(hj["text"] == lj["text"]);  // the tokenizer came with the model
  CHECK(first.err.find("downloading model.safetensors of org/tiny-gpt2") != std::string::npos);

  // huggingface_hub's layout: refs/main → the commit; the snapshot's files are relative links to
  // blobs named by their ETag, byte for byte the repo's files; nothing half-written is left.
  const fs::path repo = served.folder();
  const std::string commit = MockHub::commit_of(kRepo);
  CHECK(slurp(repo / "refs" / "main") == commit);
  for (const std::string file : {"config.json", "generation_config.json", "model.safetensors", "vocab.json", "merges.txt"}) {
    CAPTURE(file);
    const fs::path pointer = repo / "snapshots" / commit / file;
    REQUIRE(fs::is_symlink(pointer));
    CHECK(fs::read_symlink(pointer) == fs::path("../../blobs") / MockHub::etag_of(files.at(file)));
    CHECK(slurp(pointer) == files.at(file));
  }
  CHECK(files_ending(repo, ".incomplete").empty());
  CHECK(fs::is_regular_file(fs::path(served.cache.path) / ".locks" / kRepoFolder / (MockHub::etag_of(files.at("model.safetensors")) + ".lock")));
  // Only what the run needs: no .bin twin, no ONNX, no README — not even asked about.
  const auto seen = hub.requests();
  CHECK(count_requests(seen, 0, ".bin") == 0);
  CHECK(count_requests(seen, 0, ".onnx") == 0);
  CHECK(count_requests(seen, 0, "README.md") == 0);
  // The weights: HEADed on the Hub, then fetched once from the redirect's Location (the CDN).
  CHECK(count_requests(seen, 0, "model.safetensors", "GET") == 0);
  CHECK(count_requests(seen, 0, "/cdn/" + MockHub::etag_of(files.at("model.safetensors")), "GET") == 1);
  // The token went to the Hub, never to the CDN.
  for (const auto& s : seen) {
    CAPTURE(s.path);
    CHECK(s.authorization == (s.path.rfind("/cdn/", 0) == 0 ? "" : "Bearer secret"));
  }

  // A second run: one HEAD of config.json at main finds the same commit, whose snapshot holds the rest.
  const ProcessResult second = run_memfit(generate_args(kRepo, g), env);
  REQUIRE(second.exit_code == 0);
  CHECK(nlohmann::json::parse(second.out)["new_token_ids"] == g.new_token_ids);
  const auto again = hub.requests();
  REQUIRE(again.size() == seen.size() + 1);
  CHECK(again.back().method == "HEAD");
  CHECK(again.back().path == "/" + kRepo + "/resolve/main/config.json");
  CHECK(second.err.find("downloading") == std::string::npos);

  // Offline, the cache alone serves the run: no request at all.
  env["HF_HUB_OFFLINE"] = "1";
  const ProcessResult offline = run_memfit(generate_args(kRepo, g), env);
  CAPTURE(offline.err);
  REQUIRE(offline.exit_code == 0);
  CHECK(nlohmann::json::parse(offline.out)["new_token_ids"] == g.new_token_ids);
  CHECK(hub.requests().size() == again.size());
}

TEST_CASE("generate ORG/NAME offline without the cache: the missing file is named") {
  MockHub hub;
  TempDir cache;
  auto env = hub_env(hub, cache.path);
  env["HF_HUB_OFFLINE"] = "1";
  const ProcessResult r = run_memfit({"generate", kRepo, "--tokens", "1,2"}, env);
  CHECK(r.exit_code == 9);
  CHECK(r.err.find("HF_HUB_OFFLINE is set") != std::string::npos);
  CHECK(r.err.find("config.json of `org/tiny-gpt2`") != std::string::npos);
  CHECK(hub.requests().empty());
}

TEST_CASE("generate ORG/NAME uses a model huggingface_hub already cached: no download") {
  const auto golden = golden_dir();
  if (!golden) return skip_loudly("memfit generate on a transformers cache");
  const Golden g = golden_generation();
  ServedModel served(*golden);
  const auto& files = served.files;
  // The cache as hf_hub_download leaves it (file_download.py): blobs by ETag, a snapshot of links,
  // refs/main, and .no_exist markers for the files it looked for and the repo lacked.
  const fs::path repo = served.folder();
  const std::string commit = MockHub::commit_of(kRepo);
  fs::create_directories(repo / "blobs");
  fs::create_directories(repo / "snapshots" / commit);
  fs::create_directories(repo / "refs");
  std::ofstream(repo / "refs" / "main") << commit;
  for (const std::string file : {"config.json", "generation_config.json", "model.safetensors", "vocab.json", "merges.txt"}) {
    const std::string etag = MockHub::etag_of(files.at(file));
    std::ofstream(repo / "blobs" / etag, std::ios::binary) << files.at(file);
    fs::create_symlink(fs::path("../../blobs") / etag, repo / "snapshots" / commit / file);
  }
  fs::create_directories(repo / ".no_exist" / commit);
  for (const char* absent : {"model.safetensors.index.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"})
    std::ofstream(repo / ".no_exist" / commit / absent);

  const ProcessResult r = run_memfit(generate_args(kRepo, g), served.env());
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["new_token_ids"] == g.new_token_ids);
  const auto seen = served.hub.requests();
  REQUIRE(seen.size() == 1);  // the HEAD that says main is still that commit
  CHECK(seen[0].method == "HEAD");
}

TEST_CASE("forward and load ORG/NAME: a sharded repo at a commit; --revision on a folder is a usage error") {
  const auto golden = golden_dir();
  if (!golden) return skip_loudly("memfit forward ORG/NAME");
  const std::string sharded = *golden + "/tiny-gpt2/sharded";
  std::map<std::string, std::string> files;
  for (const auto& name : list_dir(sharded)) files[name] = read_text(sharded + "/" + name);
  MockHub hub;
  hub.add_model("org/sharded", "transformers", files);
  TempDir cache;
  const auto env = hub_env(hub, cache.path);
  const std::string commit = MockHub::commit_of("org/sharded");
  const ProcessResult hubrun = run_memfit({"forward", "org/sharded", "--revision", commit, "--tokens", "1,2,3", "--json"}, env);
  CAPTURE(hubrun.err);
  REQUIRE(hubrun.exit_code == 0);
  const ProcessResult local = run_memfit({"forward", sharded, "--tokens", "1,2,3", "--json"});
  REQUIRE(local.exit_code == 0);
  CHECK(nlohmann::json::parse(hubrun.out)["argmax_last"] == nlohmann::json::parse(local.out)["argmax_last"]);
  CHECK(nlohmann::json::parse(hubrun.out)["last_logits"] == nlohmann::json::parse(local.out)["last_logits"]);
  for (const auto& [name, bytes] : files)
    if (name.find(".safetensors") != std::string::npos)
      CHECK(slurp(fs::path(cache.path) / "models--org--sharded" / "snapshots" / commit / name) == bytes);
  // A commit names its files for good: a load of the same commit asks nothing.
  const std::size_t before = hub.requests().size();
  const ProcessResult load = run_memfit({"load", "org/sharded", "--revision", commit, "--json"}, env);
  CAPTURE(load.err);
  CHECK(load.exit_code == 0);
  CHECK(hub.requests().size() == before);
  // No refs/<commit>: a commit is its own name.
  CHECK_FALSE(fs::exists(fs::path(cache.path) / "models--org--sharded" / "refs" / commit));

  const ProcessResult bad = run_memfit({"load", sharded, "--revision", "main"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--revision applies to a Hub model id") != std::string::npos);
}

TEST_CASE("generate ORG/NAME: a transfer cut short names the file, leaves no blob, and the next run resumes") {
  const auto golden = golden_dir();
  if (!golden) return skip_loudly("memfit generate ORG/NAME, cut transfer");
  const Golden g = golden_generation();
  ServedModel served(*golden);
  MockHub& hub = served.hub;
  const std::string& weights = served.weights();
  const std::size_t half = weights.size() / 2;
  hub.cut_transfer(kRepo, "model.safetensors", half);
  const auto env = served.env();
  const ProcessResult cut = run_memfit(generate_args(kRepo, g), env);
  CHECK(cut.exit_code == 9);
  CHECK(cut.err.find("downloading model.safetensors of `org/tiny-gpt2`: the transfer stopped after " +
                     std::to_string(half) + " of " + std::to_string(weights.size()) + " bytes") != std::string::npos);
  const fs::path repo = served.folder();
  const fs::path blob = repo / "blobs" / MockHub::etag_of(weights);
  CHECK_FALSE(fs::exists(blob));
  CHECK_FALSE(fs::exists(repo / "snapshots" / MockHub::commit_of(kRepo) / "model.safetensors"));
  REQUIRE(fs::exists(blob.string() + ".incomplete"));
  CHECK(fs::file_size(blob.string() + ".incomplete") == half);

  // The connection holds now: the download goes on from the bytes kept.
  hub.cut_transfer(kRepo, "model.safetensors", std::string::npos);
  const std::size_t before = hub.requests().size();
  const ProcessResult resumed = run_memfit(generate_args(kRepo, g), env);
  CAPTURE(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(nlohmann::json::parse(resumed.out)["new_token_ids"] == g.new_token_ids);
  CHECK(resumed.err.find("resuming from") != std::string::npos);
  const auto seen = hub.requests();
  bool ranged = false;
  for (std::size_t i = before; i < seen.size(); ++i)
    if (seen[i].method == "GET" && seen[i].path == "/" + kRepo + "/resolve/" + MockHub::commit_of(kRepo) + "/model.safetensors")
      ranged = seen[i].range == "bytes=" + std::to_string(half) + "-";
  CHECK(ranged);
  CHECK(slurp(blob) == weights);
  CHECK_FALSE(fs::exists(blob.string() + ".incomplete"));
}

TEST_CASE("generate ORG/NAME: a size that does not match the Hub's is named and nothing is kept") {
  const auto golden = golden_dir();
  if (!golden) return skip_loudly("memfit generate ORG/NAME, size mismatch");
  const Golden g = golden_generation();
  ServedModel served(*golden);
  const std::string& weights = served.weights();
  served.hub.misstate_size(kRepo, "model.safetensors", 100);
  const ProcessResult r = run_memfit(generate_args(kRepo, g), served.env());
  CHECK(r.exit_code == 9);
  CHECK(r.err.find("downloading model.safetensors of `org/tiny-gpt2`: size mismatch: the Hub said " +
                   std::to_string(weights.size() + 100) + " bytes, the download has " +
                   std::to_string(weights.size())) != std::string::npos);
  const fs::path repo = served.folder();
  CHECK_FALSE(fs::exists(repo / "blobs" / MockHub::etag_of(weights)));
  CHECK(files_ending(repo, ".incomplete").empty());
  CHECK_FALSE(fs::exists(repo / "snapshots" / MockHub::commit_of(kRepo) / "model.safetensors"));
}

TEST_CASE("generate ORG/NAME: the Hub's errors and an unwritable cache are named") {
  const auto golden = golden_dir();
  if (!golden) return skip_loudly("memfit generate ORG/NAME errors");
  MockHub hub;
  const auto files = repo_files(*golden);
  hub.add_gated_model("org/gated", "hf_good", "transformers", files);
  // An index naming a shard the repo does not have.
  const std::string sharded = *golden + "/tiny-gpt2/sharded";
  std::map<std::string, std::string> incomplete;
  for (const auto& name : list_dir(sharded))
    if (name != "model-00002-of-00003.safetensors") incomplete[name] = read_text(sharded + "/" + name);
  hub.add_model("org/lacks-a-shard", "transformers", incomplete);
  hub.add_model("org/no-weights", "transformers", {{"config.json", files.at("config.json")}});
  TempDir cache;
  const auto env = hub_env(hub, cache.path);
  TempDir scratch;
  const std::string not_a_folder = scratch.path + "/file";
  std::ofstream(not_a_folder) << "x";

  struct Bad {
    std::string model;
    std::map<std::string, std::string> env;
    int exit_code;
    std::string says;
  };
  const Bad bad[] = {
      {"org/nope", env, 6, "model `org/nope` does not exist"},
      {"org/gated", env, 5, "HF_TOKEN"},
      {"org/lacks-a-shard", env, 7, "has no shard `model-00002-of-00003.safetensors` at revision `main`, which its "
                                    "model.safetensors.index.json names"},
      {"org/no-weights", env, 7, "model `org/no-weights` has no weights memfit can read"},
      {kRepo, hub_env(hub, not_a_folder + "/hub"), 10, not_a_folder},
  };
  hub.add_model(kRepo, "transformers", files);
  for (const Bad& b : bad) {
    CAPTURE(b.model);
    const ProcessResult r = run_memfit({"generate", b.model, "--tokens", "1,2"}, b.env);
    CAPTURE(r.err);
    CHECK(r.exit_code == b.exit_code);
    CHECK(r.err.find(b.says) != std::string::npos);
  }
  // With the token, the gated model downloads.
  auto with_token = env;
  with_token["HF_TOKEN"] = "hf_good";
  const ProcessResult ok = run_memfit({"generate", "org/gated", "--tokens", "1,2", "--max-new-tokens", "2"}, with_token);
  CAPTURE(ok.err);
  CHECK(ok.exit_code == 0);
}

}  // namespace memfit::test
