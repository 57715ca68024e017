// Pipeline-parallel generation across processes (`memfit generate --nodes/--rank/--master`,
// `--local-ranks`) on 127.0.0.1: the same ids as one process and as transformers' golden greedy
// run, and the last rank's logits at every step bitwise equal to one process's, for several stage
// splits and placements (disk inside a stage); several prompts micro-batched through the stages,
// each as it runs alone; a killed rank and a rank that never joins end every other rank with a
// named error within the timeout, and so does rank 0 failing to load; ranks whose checkpoint or
// split differ are refused at the rendezvous.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "local_ranks.h"
#include "support/reference.h"
#include "support/run_process.h"
#include "torch_test_support.h"

extern char** environ;

namespace memfit::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string ids_text(const nlohmann::json& ids) {
  std::string s;
  for (const auto& id : ids) s += (s.empty() ? "" : ",") + std::to_string(id.get<long long>());
  return s;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One rank started by hand (memfit → memfit-torch by exec: the pid is the rank's). Its stderr
// goes to a file; its stdout to a pipe the test can read as tokens stream.
struct Rank {
  pid_t pid = 0;
  int out = -1;  // read end of its stdout
  std::string err_path;
  int exit_code = -1;
  double exited_after = 0;  // seconds from `since` to its exit

  // Waits for the process to end (no sleeps: waitpid blocks).
  void wait(Clock::time_point since) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    exited_after = std::chrono::duration<double>(Clock::now() - since).count();
    exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (out >= 0) ::close(out);
    out = -1;
  }
  std::string err() const { return slurp(err_path); }
};

Rank start_rank(std::vector<std::string> args, const std::string& folder, int rank) {
  args.insert(args.begin(), MEMFIT_CLI_PATH);
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  Rank r;
  r.err_path = folder + "/rank" + std::to_string(rank) + ".err";
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipe_fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, pipe_fds[0]);
  posix_spawn_file_actions_addopen(&fa, 2, r.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(posix_spawn(&r.pid, argv[0], &fa, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&fa);
  ::close(pipe_fds[1]);
  r.out = pipe_fds[0];
  return r;
}

// `generate` arguments of one rank of `ranks` (rendezvous at `port`).
std::vector<std::string> rank_args(std::vector<std::string> args, int ranks, int rank, int port) {
  for (const std::string& s : {std::string("--nodes"), std::to_string(ranks), std::string("--rank"), std::to_string(rank),
                               std::string("--master"), "127.0.0.1:" + std::to_string(port)})
    args.push_back(s);
  return args;
}

// --logits-out's file: per (prompt, step), the logits as float32 (they were written exactly).
std::map<std::pair<int, int>, std::vector<float>> read_logits(const std::string& path) {
  std::map<std::pair<int, int>, std::vector<float>> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    std::vector<float>& row = out[{j["prompt"].get<int>(), j["step"].get<int>()}];
    for (const auto& v : j["logits"]) row.push_back(static_cast<float>(v.get<double>()));
  }
  return out;
}

nlohmann::json generated(const std::vector<std::string>& args) {
  const ProcessResult r = run_memfit(args);
  CAPTURE(args);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("pipeline: 2 and 3 ranks generate the golden greedy ids, for several splits and placements") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("pipeline-parallel generation");
  struct Split {
    int ranks;
    const char* stages;      // "" = the planner's split
    const char* device_map;  // "" = all on the CPU
    const char* max_memory = "";
  };
  const struct {
    const char* model;
    std::vector<Split> splits;
  } models[] = {
      {"tiny-gpt2",
       {{2, "0-1,2-3", ""},
        {2, "0,1-3", R"({"transformer.h.2": "disk", "": "cpu"})"},  // a disk block inside rank 1's stage
        {3, "0,1-2,3", R"({"transformer.h.0": "disk", "transformer.wte": "disk", "": "cpu"})"},
        {3, "", ""},
        {3, "", "auto", "cpu:1GiB"},  // each rank's own map by the planner, as plan --nodes makes it
        {2, "", "sequential", "cpu:60KB,disk:1GB"}}},  // … with blocks on disk
      {"tiny-llama",
       {{2, "0-2,3", ""},
        {2, "0,1-3", R"({"model.layers.1": "disk", "": "cpu"})"},
        {3, "0-1,2,3", R"({"model.layers.3": "disk", "lm_head": "disk", "": "cpu"})"},  // the head's rank streams it
        {3, "", ""}}},
  };
  for (const auto& m : models) {
    const auto golden = golden_json(m.model);
    const auto& gen = golden["generation"];
    const std::string prompt = ids_text(golden["inputs"][gen["input"].get<std::string>()]["input_ids"][0]);
    const std::vector<std::string> common = {"generate", *dir + "/" + m.model, "--tokens", prompt, "--max-new-tokens",
                                             std::to_string(gen["max_new_tokens"].get<int>()), "--threads", "1", "--json"};
    TempDir tmp;
    const std::string single_logits = tmp.path + "/single.jsonl", pipe_logits = tmp.path + "/pipeline.jsonl";
    auto single_args = common;
    single_args.insert(single_args.end(), {"--logits-out", single_logits});
    const auto single = generated(single_args);
    REQUIRE(single["new_token_ids"] == gen["new_token_ids"]);
    const auto want = read_logits(single_logits);
    REQUIRE(want.size() == gen["new_token_ids"].size());
    // One process's logits against transformers' own (the golden top logit of each step): float32
    // on both sides, different kernels — the golden file's float64-vs-float32 spread is ~1e-5.
    for (std::size_t step = 0; step < want.size(); ++step) {
      const auto& row = want.at({0, static_cast<int>(step)});
      CHECK(std::abs(*std::max_element(row.begin(), row.end()) - gen["top1_logit_per_step"][step].get<double>()) < 1e-4);
    }
    for (const Split& s : m.splits) {
      CAPTURE(m.model);
      CAPTURE(s.stages);
      CAPTURE(s.device_map);
      auto args = common;
      args.insert(args.end(), {"--local-ranks", std::to_string(s.ranks)});
      if (*s.stages) args.insert(args.end(), {"--stages", s.stages});
      if (*s.device_map) args.insert(args.end(), {"--device-map", s.device_map});
      if (*s.max_memory) args.insert(args.end(), {"--max-memory", s.max_memory});
      args.insert(args.end(), {"--logits-out", pipe_logits});
      const auto j = generated(args);
      // Bitwise: the same float32 kernels on the same bytes in the same order (one thread each),
      // and hidden states cross the boundary as their float32 bytes, uncast.
      CHECK(read_logits(pipe_logits) == want);
      CHECK(j["prompt_ids"] == single["prompt_ids"]);
      CHECK(j["new_token_ids"] == gen["new_token_ids"]);
      CHECK(j["stopped_at"] == "max_new_tokens");
      CHECK(j["pipeline"]["ranks"] == s.ranks);
      if (*s.stages) CHECK(j["pipeline"]["stages"] == s.stages);
    }
  }
}

TEST_CASE("pipeline: seeded sampling on the last rank gives the single process's ids") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("pipeline sampling");
  const std::vector<std::string> common = {"generate", *dir + "/tiny-llama", "--tokens", "1,50,60,70", "--max-new-tokens",
                                           "10", "--temperature", "1.5", "--top-k", "50", "--repetition-penalty", "1.3",
                                           "--seed", "3", "--threads", "1", "--json"};
  const auto single = generated(common);
  auto args = common;
  args.insert(args.end(), {"--local-ranks", "2", "--stages", "0-1,2-3"});
  CHECK(generated(args)["new_token_ids"] == single["new_token_ids"]);
  CHECK(single["new_token_ids"].size() == 10);
}

TEST_CASE("pipeline: several prompts micro-batched through 2 ranks come out as each does alone") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("pipeline micro-batches");
  const auto golden = golden_json("tiny-llama");
  const auto& gen = golden["generation"];
  const std::string first = ids_text(golden["inputs"][gen["input"].get<std::string>()]["input_ids"][0]);
  const std::string rows[] = {first, "1,50,60,70"};
  TempDir tmp;
  // Greedy, then seeded sampling (each prompt has its own sampler, seeded alike).
  const std::vector<std::vector<std::string>> choices = {
      {}, {"--temperature", "1.5", "--top-k", "50", "--repetition-penalty", "1.3", "--seed", "3"}};
  for (const auto& choice : choices) {
    CAPTURE(choice);
    std::vector<std::string> common = {"generate", *dir + "/tiny-llama", "--max-new-tokens", "12", "--threads", "1", "--json"};
    common.insert(common.end(), choice.begin(), choice.end());
    auto both = common;
    const std::string pipe_logits = tmp.path + "/pipeline.jsonl";
    both.insert(both.end(), {"--tokens", rows[0] + ";" + rows[1], "--local-ranks", "2", "--stages", "0-1,2-3",
                             "--logits-out", pipe_logits});
    const auto j = generated(both);
    REQUIRE(j["outputs"].size() == 2);
    CHECK(j["pipeline"]["micro_batches"] == 2);
    const auto got_logits = read_logits(pipe_logits);
    for (int k = 0; k < 2; ++k) {
      CAPTURE(k);
      auto alone = common;
      const std::string alone_logits = tmp.path + "/alone.jsonl";
      alone.insert(alone.end(), {"--tokens", rows[k], "--logits-out", alone_logits});
      const auto single = generated(alone);
      CHECK(j["outputs"][k]["prompt_ids"] == single["prompt_ids"]);
      CHECK(j["outputs"][k]["new_token_ids"] == single["new_token_ids"]);
      CHECK(j["outputs"][k]["stopped_at"] == single["stopped_at"]);
      for (const auto& [key, row] : read_logits(alone_logits)) {
        CAPTURE(key.second);
        const auto it = got_logits.find({k, key.second});
        REQUIRE(it != got_logits.end());
        CHECK(it->second == row);
      }
    }
    if (choice.empty()) CHECK(j["outputs"][0]["new_token_ids"] == gen["new_token_ids"]);
  }
}

TEST_CASE("pipeline: rank 0 failing to load is what the other ranks name") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("pipeline: rank 0 fails to load");
  TempDir tmp;
  const int port = torchrt::free_local_port();
  const std::vector<std::string> common = {"generate", *dir + "/tiny-llama", "--tokens", "1,50,60,70", "--stages",
                                           "0-1,2-3", "--timeout", "20"};
  // Rank 0's map names only rank 1's blocks: its own tensors are not covered, and its load fails
  // after the rendezvous (the map is no part of the fingerprint), while rank 1 loads.
  auto zero = common;
  zero.insert(zero.end(), {"--device-map", R"({"model.layers.3": "cpu"})"});
  const auto t0 = Clock::now();
  Rank r0 = start_rank(rank_args(zero, 2, 0, port), tmp.path, 0);
  Rank r1 = start_rank(rank_args(common, 2, 1, port), tmp.path, 1);
  r0.wait(t0);
  r1.wait(t0);
  CAPTURE(r0.err());
  CAPTURE(r1.err());
  CHECK(r0.exit_code != 0);
  CHECK(r0.err().find("rank 0: ") != std::string::npos);
  CHECK(r1.exit_code != 0);
  CHECK(r1.err().find("rank 0 failed to load: ") != std::string::npos);
  CHECK(r1.err().find("lost the master") == std::string::npos);
  CHECK(r1.exited_after < 20 + 30);
}

TEST_CASE("pipeline: a killed rank ends every other rank with a named error within the timeout") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("pipeline: a killed rank");
  // tiny-llama without its EOS id (config copied without it, weights linked): generation can only
  // end by --max-new-tokens, far beyond the moment the rank is killed.
  TempDir tmp;
  const fs::path model = fs::path(tmp.path) / "tiny-llama";
  fs::create_directories(model);
  auto config = nlohmann::json::parse(slurp(*dir + "/tiny-llama/config.json"));
  config.erase("eos_token_id");
  std::ofstream(model / "config.json") << config.dump();
  fs::create_symlink(*dir + "/tiny-llama/model.safetensors", model / "model.safetensors");

  const int port = torchrt::free_local_port(), timeout = 20;
  const std::vector<std::string> common = {"generate", model.string(), "--tokens", "1,50,60,70", "--max-new-tokens",
                                           "20000", "--stages", "0,1-2,3", "--threads", "1",
                                           "--timeout", std::to_string(timeout)};
  std::vector<Rank> ranks;
  for (int r = 0; r < 3; ++r) ranks.push_back(start_rank(rank_args(common, 3, r, port), tmp.path, r));
  // Rank 0 prints each id as it comes: once one has, every rank is generating.
  char c = 0;
  const bool streaming = ::read(ranks[0].out, &c, 1) == 1;
  REQUIRE(streaming);
  ::kill(ranks[1].pid, SIGKILL);
  const auto killed = Clock::now();
  for (int r : {0, 2}) {
    ranks[static_cast<std::size_t>(r)].wait(killed);
    const Rank& k = ranks[static_cast<std::size_t>(r)];
    CAPTURE(r);
    CAPTURE(k.err());
    CHECK(k.exit_code == 9);  // memfit's network exit code
    CHECK(k.err().find("rank " + std::to_string(r) + ": ") != std::string::npos);
    CHECK(k.err().find("rank 1") != std::string::npos);  // the lost rank is named, by this rank or the one it waited on
    CHECK(k.exited_after < timeout + 15);
  }
  ranks[1].wait(killed);
  CHECK(ranks[1].exit_code == 128 + SIGKILL);
}

TEST_CASE("pipeline: a rank that never joins is named within the timeout") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("pipeline: a missing rank");
  TempDir tmp;
  const int port = torchrt::free_local_port();
  const std::vector<std::string> common = {"generate", *dir + "/tiny-gpt2", "--tokens", "464,68,586", "--timeout", "3"};
  const auto t0 = Clock::now();
  std::vector<Rank> ranks;
  for (int r : {0, 2}) ranks.push_back(start_rank(rank_args(common, 3, r, port), tmp.path, r));
  for (Rank& k : ranks) {
    k.wait(t0);
    CAPTURE(k.err());
    CHECK(k.exit_code == 9);
    CHECK(k.err().find("rank 1 did not join within 3 s") != std::string::npos);
    CHECK(k.exited_after < 3 + 30);  // the timeout, plus starting LibTorch on a loaded machine
  }
}

TEST_CASE("pipeline: ranks whose checkpoint or split differ are refused at the rendezvous") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("pipeline: mismatched ranks");
  TempDir tmp;
  const std::string gpt2 = *dir + "/tiny-gpt2";
  // The same config.json over the float16 copy of the weights: only the checkpoint differs.
  const fs::path fp16 = fs::path(tmp.path) / "gpt2-fp16";
  fs::create_directories(fp16);
  fs::copy_file(gpt2 + "/config.json", fp16 / "config.json");
  fs::create_symlink(gpt2 + "/fp16/model.safetensors", fp16 / "model.safetensors");
  const struct {
    std::vector<std::string> rank1;  // rank 1's arguments (rank 0: tiny-gpt2, stages 0-1,2-3)
    const char* says;
  } cases[] = {
      {{"generate", fp16.string(), "--tokens", "464,68,586", "--stages", "0-1,2-3"}, "different checkpoint"},
      {{"generate", gpt2, "--tokens", "464,68,586", "--stages", "0-2,3"}, "different stage split: '0-2,3' there, '0-1,2-3' here"},
      {{"generate", gpt2, "--tokens", "464,68,586", "--stages", "0-1,2-3", "--seed", "5"}, "different generation options"},
  };
  for (const auto& c : cases) {
    const int port = torchrt::free_local_port();
    const auto t0 = Clock::now();
    Rank r0 = start_rank(rank_args({"generate", gpt2, "--tokens", "464,68,586", "--stages", "0-1,2-3"}, 2, 0, port),
                         tmp.path, 0);
    Rank r1 = start_rank(rank_args(c.rank1, 2, 1, port), tmp.path, 1);
    r0.wait(t0);
    r1.wait(t0);
    CAPTURE(c.says);
    CAPTURE(r0.err());
    CHECK(r0.exit_code == 11);  // memfit's mismatch exit code
    CHECK(r0.err().find(c.says) != std::string::npos);
    CHECK(r0.err().find("rank 0: rank 1 runs a different") != std::string::npos);
    CHECK(r1.exit_code == 11);
    CHECK(r1.err().find("rank 1: rank 0 runs a different") != std::string::npos);
  }
}

TEST_CASE("pipeline: bad pipeline options are named") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("pipeline options");
  const std::string gpt2 = *dir + "/tiny-gpt2";
  const int port = torchrt::free_local_port();
  const std::string master = "127.0.0.1:" + std::to_string(port);
  const struct {
    std::vector<std::string> args;
    int exit_code;
    std::string says;
  } bad[] = {
      {{"generate", gpt2, "--tokens", "1,2", "--nodes", "2", "--rank", "0"}, 2, "--master: '' is not HOST:PORT"},
      {{"generate", gpt2, "--tokens", "1,2", "--nodes", "1", "--rank", "0", "--master", master}, 2, "2 ranks or more"},
      {{"generate", gpt2, "--tokens", "1,2", "--nodes", "2", "--master", master}, 2, "--rank: give this process's rank"},
      {{"generate", gpt2, "--tokens", "1,2", "--nodes", "2", "--rank", "0", "--master", master, "--stages", "0-1,3"}, 2,
       "--stages: '3': ranges must be contiguous from block 0 (expected one starting at 2)"},
      {{"generate", gpt2, "--tokens", "1,2", "--nodes", "2", "--rank", "0", "--master", master, "--stages", "0-3"}, 2,
       "gives 1 ranges for 2 ranks"},
      {{"generate", gpt2, "--tokens", "1,2", "--local-ranks", "5"}, 2, "the model has 4 blocks, fewer than ranks"},
      // Nothing listens at the master's port: a later rank says so after --timeout.
      {{"generate", gpt2, "--tokens", "1,2", "--nodes", "2", "--rank", "1", "--master", master, "--timeout", "1"}, 9,
       ("rank 1: cannot reach the master " + master + " (rank 0) within 1 s")},
  };
  for (const auto& b : bad) {
    CAPTURE(b.args);
    const ProcessResult r = run_memfit(b.args);
    CHECK(r.exit_code == b.exit_code);
    CHECK(r.err.find(b.says) != std::string::npos);
  }
}

}  // namespace memfit::test
