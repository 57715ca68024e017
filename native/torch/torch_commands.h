// native/torch/torch_commands.h — `memfit load` and `memfit forward` (run by memfit-torch, which
// `memfit` execs). No LibTorch types here, so the argument parser (torch_args) stays torch-free.
#pragma once

#include <string>
#include <vector>

namespace memfit::torchrt {

struct PlacementArgs {
  std::string device_map;      // auto|balanced|balanced_low_0|sequential|fit, map.json, or inline JSON
  std::string max_memory;      // "0=8GiB,cpu=16GiB"
  std::string offload_folder;  // .bin sources placed on disk
  std::string dtype;           // weights in memory (default float32)
  std::string config;          // config.json (or folder) when not next to the weights
  bool allow_missing = false;
  bool ignore_unexpected = false;
};

struct LoadArgs {
  std::string dir;
  PlacementArgs placement;
  bool json = false;
};

struct ForwardArgs {
  std::string dir;
  PlacementArgs placement;
  std::string tokens;          // "464,2068,7586" — rows separated by ';' for a batch
  bool no_prefetch = false;
  int prefetch_depth = 1;
  int threads = 0;             // 0: one per core
  int generate = 0;            // greedy new tokens after the (single-row) prompt
  int repeat = 1;              // forwards to time (the last one is reported)
  bool evict = false;          // drop disk weights from the page cache after use (benchmarks)
  bool json = false;
};

// Print their report; a failure throws (Failure, or core's Error), which main() turns into an exit code.
void run_load(const LoadArgs& args);
void run_forward(const ForwardArgs& args);
// Comma/semicolon token rows → ids; throws Failure(kUsage) naming the bad entry.
std::vector<std::vector<long long>> parse_token_rows(const std::string& text);

}  // namespace memfit::torchrt
