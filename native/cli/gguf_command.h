// native/cli/gguf_command.h — `memfit inspect` and `memfit estimate` on GGUF models (llama.cpp):
// FILE.gguf, a split's first file, ORG/NAME:FILE.gguf on the Hub (headers by Range), and for
// inspect a Hub repo of GGUF files (ORG/NAME): one table of every quantization.
#pragma once

#include <cstdint>
#include <string>

namespace memfit::cli {

// llama.cpp's own flag names (common/arg.cpp); -ngl, -c, -ctk, -ctv, -fa, -ub, -np as aliases.
struct GgufArgs {
  std::string target;
  bool json = false;
  std::int64_t gpu_layers = -1;   // --gpu-layers: −1 all
  std::int64_t ctx_size = 4096;   // --ctx-size: 0 the model's context_length
  std::string cache_type_k = "f16", cache_type_v = "f16";
  std::string flash_attn = "auto";  // on | off | auto (on)
  std::int64_t ubatch = 512;      // --ubatch-size
  std::int64_t parallel = 1;      // --parallel
  std::string vram;               // --vram 24GiB
  std::string overhead;           // --overhead (default 500MiB on the GPU)
};

// True when `target` names a GGUF model: a .gguf path, or ORG/NAME:FILE.gguf.
bool is_gguf_target(const std::string& target);
int run_gguf_inspect(const GgufArgs& args);
int run_gguf_estimate(const GgufArgs& args);
// `memfit inspect ORG/NAME` (or a folder) of a repo with .gguf files and no checkpoint
// transformers reads: core's quantization table (memfit/repo/gguf_repo.h, the one `memfit
// estimate ORG/NAME` and the api's repo print), with llama.cpp's flags. False when the repo
// lists no .gguf model file.
bool try_gguf_repo_table(const GgufArgs& args);
// -ngl → --gpu-layers, -ctk → --cache-type-k, …: llama.cpp's short spellings, which CLI11
// cannot declare (one dash, several letters), rewritten before parsing.
void rewrite_llamacpp_flags(int argc, char** argv);

}  // namespace memfit::cli
