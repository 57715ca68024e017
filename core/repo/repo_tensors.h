// core/repo/repo_tensors.h — tensors as the sentence-transformers and PEFT kinds size them: read
// from a safetensors header the caller fetched, or from a model's stored form, each with its
// bytes at its own dtype or at the dtype the caller asked for (RepoOptions::dtype).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memfit/format/checkpoint_index.h"
#include "memfit/format/safetensors.h"
#include "memfit/model/dtype.h"
#include "memfit/model/model.h"
#include "memfit/repo/repo_kind.h"

namespace memfit::repo {

struct SizedTensor {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
  std::uint64_t numel = 0;
  std::uint64_t bytes = 0;  // as stored (a quantized piece keeps its own)
};

// RepoOptions::dtype as a DType (nothing when ""); throws Error(kInvalidArgument) naming it.
std::optional<DType> option_dtype(const RepoOptions& options);

// The bytes of `t` when floats are cast to `cast` (integer and quantized pieces keep theirs).
std::uint64_t bytes_as(const SizedTensor& t, std::optional<DType> cast);

// The safetensors header read under `key`, parsed (its file size checked when known). Throws
// Error(kRepoMissingFile) when it was not read, else the parser's error naming the repo and file.
safetensors::Header parsed_header(const RepoFiles& files, const std::string& key);

// Its tensors, sized.
std::vector<SizedTensor> header_tensors(const RepoFiles& files, const std::string& key);

// The shard paths a sharded checkpoint's index names, in its order, each beside the index
// ("unet/diffusion_pytorch_model-00001-of-00002.safetensors"); throws the index's own error
// (kIndexInvalid, kIndexInvalidShardName) naming the index file.
std::vector<std::string> index_shard_paths(const RepoFiles& files, const std::string& index_path);

// A sharded checkpoint's headers: each shard the index at `index_path` names (read beside it),
// parsed, then checked against the index's weight map and total_size
// (check_index_against_shards), so a tensor missing from its shard, or a shard's tensor the index
// does not list, is an error naming the index — not a silently smaller model. Shard names as the
// index gives them, in its order.
ShardHeaders index_headers(const RepoFiles& files, const std::string& index_path);

// Tensors of parsed headers, sized, in order.
std::vector<SizedTensor> sized_tensors(const ShardHeaders& headers);

// A model's checkpoint as transformers would store it, from its config alone (stored_form.h).
std::vector<SizedTensor> stored_tensors(const Model& model);

// Totals over tensors: parameters (the floating tensors' elements: a saved integer buffer such as
// BERT's position_ids is no parameter) and bytes at `cast`.
struct TensorTotals {
  std::uint64_t parameters = 0;
  std::uint64_t bytes = 0;
};
TensorTotals totals(const std::vector<SizedTensor>& tensors, std::optional<DType> cast);

// The dtypes of tensors as one word ("float32", "bfloat16+float32"), largest share first; the
// cast dtype when one is asked.
std::string dtype_summary(const std::vector<SizedTensor>& tensors, std::optional<DType> cast);

// "1.2 GB" as the CLI's tables print sizes (accelerate's convert_bytes).
std::string size_text(std::uint64_t bytes);

// "model.layers.12.mlp" → "model.layers.*.mlp": numbered siblings grouped in report tables.
std::string generic_name(const std::string& name);

// `path` inside a module folder: "" → file, "1_Pooling" → "1_Pooling/file".
std::string join_path(const std::string& folder, const std::string& file);

}  // namespace memfit::repo
