// memfit/model/gguf_model.h — a GGUF model (one file, or the splits of one) as memfit's estimate
// needs it: every tensor with its ggml type and exact bytes, which block it belongs to, and the
// model's dimensions read from the metadata the way llama.cpp's load_hparams reads them
// (llama-model.cpp; keys from llama-arch.cpp), into the same ModelDims every other model fills.
//
// Keys read ({arch} = general.architecture):
//   {arch}.block_count, .context_length, .embedding_length, .feed_forward_length (scalar or per
//   layer), .attention.head_count and .head_count_kv (scalar or per layer; head_count_kv
//   defaults to head_count), .attention.key_length / .value_length (default embedding ÷ heads),
//   .attention.sliding_window and .attention.sliding_window_pattern (a period or a per-layer bool
//   array; the period's default is the architecture's own, as llama.cpp's loaders set it),
//   .attention.kv_lora_rank + .rope.dimension_count (MLA), .expert_count, .expert_used_count,
//   .ssm.conv_kernel / .inner_size / .state_size / .group_count (recurrent layers: Mamba's, and
//   a hybrid's layers whose head_count_kv is 0), .vocab_size or the token list's length.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memfit/error.h"
#include "memfit/format/gguf.h"
#include "memfit/model/model_dims.h"

namespace memfit {

struct GgufTensor {
  std::string name;
  std::vector<std::int64_t> ne;  // as stored (ne[0] innermost)
  std::uint32_t type = 0;        // ggml type id
  std::uint64_t numel = 0, bytes = 0;
  int layer = -1;                // N of "blk.N.", else -1 (embeddings, output, norms)
  std::size_t file = 0;          // index into GgufModel::files
};

// The tensors of one ggml type, together.
struct GgufTypeTotal {
  std::uint32_t type = 0;
  std::uint64_t tensors = 0, params = 0, bytes = 0;
};

struct GgufModel {
  std::string architecture;      // general.architecture
  std::string name;              // general.name ("" when absent)
  std::vector<std::string> files;  // the split files in split.no order (one for a single file)
  std::uint64_t file_bytes = 0;    // all files together
  std::vector<GgufTensor> tensors;
  ModelDims dims;
  std::int64_t context_length = 0;  // {arch}.context_length: the training context (0: absent)
  std::uint64_t weight_bytes = 0, params = 0;
  std::vector<std::string> notes;   // what was assumed, in the reports' words

  std::vector<GgufTypeTotal> by_type() const;  // largest bytes first
  // Bytes of the tensors of block `layer` (−1: outside the blocks).
  std::uint64_t layer_bytes(int layer) const;
  bool has_tensor(std::string_view tensor) const;
};

// "model-00001-of-00003.gguf" → {1, 3}; {0, 0} for a name that is not a split's.
struct SplitName {
  int no = 0, count = 0;
  std::string prefix;  // "model"
};
SplitName split_name(std::string_view file_name);
// The name of split `no` (1-based) of `count` with this prefix: "model-00002-of-00003.gguf".
std::string split_file_name(std::string_view prefix, int no, int count);

// The model of one file, or of the splits of one in any order (split.no / split.count checked:
// each split once, the same count everywhere, split.tensors.count = the tensors found, no
// tensor twice). `names[i]` names `files[i]` in messages. Error(kInvalidValue / kMissingKey)
// naming the file and key.
Result<GgufModel> gguf_model(const std::vector<gguf::File>& files, const std::vector<std::string>& names);

// The dimensions from one file's metadata (the first split's).
ModelDims gguf_dims(const gguf::File& file, std::vector<std::string>& notes);

}  // namespace memfit
