// native/torch/torch_commands.h — `memfit load`, `memfit forward` and `memfit generate` (run by memfit-torch, which
// `memfit` execs). No LibTorch types here, so the argument parser (torch_args) stays torch-free.
#pragma once

#include <string>
#include <vector>

namespace memfit::torchrt {

struct PlacementArgs {
  std::string device_map;      // auto|balanced|balanced_low_0|sequential|fit, map.json, or inline JSON
  std::string max_memory;      // "0=8GiB,cpu=16GiB"
  std::string offload_folder;  // .bin sources placed on disk
  std::string dtype;           // weights in memory (default: the checkpoint's)
  std::string config;          // config.json (or folder) when not next to the weights
  std::string revision;        // a Hub model's branch, tag or commit ("" = main)
  std::string token;           // a Hub model's token ("" = HF_TOKEN, the token file)
  bool allow_missing = false;
  bool ignore_unexpected = false;
};

struct LoadArgs {
  std::string dir;
  PlacementArgs placement;
  bool json = false;
};

// How blocks run, shared by forward and generate.
struct ExecArgs {
  bool no_prefetch = false;
  int prefetch_depth = 1;
  int threads = 0;             // 0: one per core
  std::string compute_dtype;   // "" = float32 on a CPU, the weights' dtype on a GPU
  bool evict = false;          // drop disk weights from the page cache after use (benchmarks)
};

struct ForwardArgs {
  std::string dir;
  PlacementArgs placement;
  ExecArgs exec;
  std::string tokens;          // "464,2068,7586" — rows separated by ';' for a batch
  int generate = 0;            // greedy new tokens after the (single-row) prompt
  int repeat = 1;              // forwards to time (the last one is reported)
  bool json = false;
};

// Pipeline-parallel generation over several processes (docs/pipeline.md, "The runtime").
struct PipelineArgs {
  int nodes = 0;               // ranks in all (0: one process, no pipeline)
  int rank = -1;               // this process's rank, 0 … nodes-1
  std::string master;          // HOST:PORT of rank 0's rendezvous store
  std::string stages;          // "0-11,12-23": each rank's blocks (default: balanced like plan --nodes)
  int local_ranks = 0;         // start this many ranks on 127.0.0.1 (like torchrun)
  int timeout = 60;            // seconds any rank waits for another before failing
  int load_timeout = 600;      // seconds ranks wait for each other's loads
  std::string backend = "gloo";  // the process group: gloo (CPU tensors) or nccl (CUDA LibTorch)
};

struct GenerateArgs {
  std::string dir;
  PlacementArgs placement;
  ExecArgs exec;
  std::vector<std::string> prompts;  // --prompt TEXT, repeatable (tokenized with the model's tokenizer)
  std::string prompts_file;    // --prompts-file FILE: one prompt per line
  std::string tokens;          // --tokens IDS instead of a prompt (rows separated by ';': several)
  std::string chat;            // --chat TEXT: one user message through the chat template
  std::string tokenizer;       // tokenizer.json / folder when it is not next to the weights
  int max_new_tokens = 20;
  bool greedy = false;
  std::string temperature, top_p, repetition_penalty;  // decimals, checked by run_generate
  int top_k = 0;
  int seed = 0;
  std::vector<std::string> stop;  // --stop STR, repeatable
  bool no_special = false;     // do not add the tokenizer's special tokens (BOS) to --prompt
  bool stats = false;
  bool json = false;
  std::string logits_out;      // each step's logits as JSON Lines (logits_log.h)
  PipelineArgs pipeline;
};

// Print their report; a failure throws (Failure, or core's Error), which main() turns into an exit code.
void run_load(const LoadArgs& args);
void run_forward(const ForwardArgs& args);
void run_generate(const GenerateArgs& args);
// Comma/semicolon token rows → ids; throws Failure(kUsage) naming the bad entry.
std::vector<std::vector<long long>> parse_token_rows(const std::string& text);

}  // namespace memfit::torchrt
