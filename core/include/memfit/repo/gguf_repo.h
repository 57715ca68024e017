// memfit/repo/gguf_repo.h — a Hub repo of GGUF files (llama.cpp): one row per quantization (a
// split model's parts together), its size, and whether it fits a GPU at a context, with the
// largest --gpu-layers that does. The CLI (`memfit estimate|inspect ORG/NAME`) and the page
// (the api's `repo`) both answer through repo_report(RepoKind::kGguf, …), which calls this.
//
// Reads: one header, not one per quantization. Every quantization of a model has the same
// dimensions and tensors (only their types differ), so the header of one representative gives
// the dims, the KV cache and the compute buffer for every row; each other row's tensor bytes
// are the representative's scaled to that row's size (the listing's). The representative is a
// single-file model when there is one (its one header holds every tensor): Q4_K_M when listed
// (the quantization most people download, so its row is exact), else the first in the listing.
// A repo of split models only needs every part of one (llama.cpp's gguf-split writes the
// metadata into the first part alone; the others hold their tensors' infos, a few KiB).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memfit/memory/llamacpp_offload.h"
#include "memfit/repo/repo_kind.h"

namespace memfit::repo {

// The first read of a GGUF header when nothing says how long it is. The header's size is mostly
// the tokenizer: a 32k vocabulary fits in 1 MiB, a 128k–150k one with its BPE merges (Llama 3,
// Qwen) takes 6–8 MiB; a longer header is asked for again with twice the bytes, so the rounds
// stay few (1, 2, 4, 8 MiB) without fetching megabytes for a small one.
inline constexpr std::uint64_t kGgufFirstRead = 1ull << 20;

// "Llama-3-8B-Instruct-Q4_K_M.gguf" → "Q4_K_M", "model.q8_0.gguf" → "Q8_0", "m-BF16-00001-of-
// 00002.gguf" → "BF16": the last '-'/'.'-separated word of the name that is a llama.cpp type
// (F32, F16, BF16, Q…, IQ…, TQ…, MXFP4…), upper-cased; "" when none is.
std::string gguf_quant_of_name(std::string_view path);

// One model of the repo: a file, or the parts of a split model.
struct GgufRepoModel {
  std::vector<std::string> paths;     // the parts listed, in part order (one for a single file)
  int parts = 1;                      // the split count (1: a single file)
  std::string quant;                  // from the name ("" when it does not say)
  std::optional<std::uint64_t> size;  // all parts' bytes; nullopt when one is unknown or unlisted
};

struct GgufRepoListing {
  std::vector<GgufRepoModel> models;  // in listing order
  std::vector<std::string> projectors;  // mmproj-*.gguf: a vision projector, not a quantization
};
GgufRepoListing gguf_repo_listing(const RepoFiles& files);

// The CLI passes llama.cpp's own flags; the page's RepoOptions map onto the same defaults
// (gguf_repo_options: context 0 → LlamaCppOptions' --ctx-size default, overhead kRunDefaults').
struct GgufRepoOptions {
  LlamaCppOptions llama;
  std::optional<double> vram;  // bytes; nullopt: no fit columns
};
GgufRepoOptions gguf_repo_options(const RepoOptions& options);

RepoReport gguf_repo_report(const RepoFiles& files, const GgufRepoOptions& options);

}  // namespace memfit::repo
