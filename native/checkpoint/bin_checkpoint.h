// native/bin_checkpoint.h — PyTorch `.bin` checkpoints (torch.save zip archives) read from disk,
// without Python and without LibTorch.
//
// What is read: the zip's tail and central directory, each entry's local header, `<stem>/data.pkl`
// (unpickled by core's restricted unpickler: only OrderedDict, _rebuild_tensor_v2,
// _rebuild_parameter[_with_state] and torch.*Storage are accepted; any other global is refused
// before anything is built, like torch.load(weights_only=True)). The storages
// (`<stem>/data/<key>`) are never read here: each tensor gets the absolute file offset of its
// first element, so a loader can mmap the file and view the bytes in place.
//
// Accepted paths: a `.bin` file; a `*.bin.index.json`; a folder (its pytorch_model.bin.index.json,
// else its pytorch_model.bin, else its only `*.bin` file).
//
// For the LibTorch loader (native/torch/), per tensor:
//   MappedFile f(t.file);                       // native/mapped_file.h, MAP_PRIVATE
//   auto* p = f.at(t.data_offset, t.span_bytes, t.name);
//   torch::from_blob(p, t.shape, t.stride, options.dtype(...))   // zero-copy view
// `stride` is in elements (torch's convention); `shape`/`stride` have the same length (0 for a
// scalar). Tied weights (GPT-2's lm_head.weight and transformer.wte.weight) are two BinTensors
// with the same (file, storage_key), hence the same storage_file_offset: create the storage once
// and view it twice to keep them tied.
//
// All offsets, shapes and strides were checked: [data_offset, data_offset + span_bytes) lies
// inside the storage, which lies inside the file (and inside its zip entry).
//
// Errors throw CliError: kExitFile for unreadable files, the exit code of the core ErrorCode
// (kExitInvalidInput / kExitUnsupported) for malformed or hostile archives and pickles.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memfit/format/checkpoint_index.h"
#include "memfit/format/torch_bin.h"
#include "memfit/model/checkpoint_tree.h"
#include "memfit/model/dtype.h"
#include "memfit/model/tensor_tree.h"

namespace memfit::cli {

// core's record of one tensor (name, dtype, shape, stride in elements, storage key — an equal
// key is a shared storage —, absolute file offsets of the storage and of the first element,
// span_bytes, nbytes, contiguous), plus where the file is.
struct BinTensor : torch_bin::Tensor {
  std::string file;   // path of the .bin file holding the storage (as opened)
  std::string shard;  // its file name (what an index's weight_map says)
};

struct BinCheckpoint {
  std::vector<BinTensor> tensors;    // state-dict order (shard by shard, in index order)
  std::vector<std::string> files;    // the .bin files read, in order
  std::optional<CheckpointIndex> index;
  std::string index_name;            // "pytorch_model.bin.index.json" when sharded
  std::vector<std::string> warnings;
  // name/dtype/shape/shard, for checkpoint_tree / validate.
  std::vector<CheckpointTensor> checkpoint_tensors() const;
  // The same without tied aliases (tensors viewing exactly the bytes of an earlier one, as GPT-2's
  // lm_head.weight views transformer.wte.weight's): each parameter once, as save_pretrained
  // stores them in safetensors — what `estimate` sizes.
  std::vector<CheckpointTensor> untied_checkpoint_tensors() const;
};

// Equal for two tensors exactly when they view the same bytes the same way: the same storage
// (`storage` names file and key), offset, shape, stride and dtype. The later one is a tied alias.
std::string tensor_view_key(const std::string& storage, std::uint64_t storage_offset,
                            const Shape& shape, const std::vector<std::int64_t>& stride, DType dtype);

// True when `dir` holds a .bin checkpoint (pytorch_model.bin.index.json or *.bin files).
bool has_local_bin_checkpoint(const std::string& dir);
// True for a path that names a .bin checkpoint: a *.bin file, a *.bin.index.json, or a folder
// for which has_local_bin_checkpoint() is true and that has no safetensors weights.
bool is_bin_checkpoint_path(const std::string& path);

// Reads a .bin file, a pytorch_model.bin.index.json, or a folder (index first, else the single
// pytorch_model.bin). Sharded: every weight_map entry is checked against its shard's keys (both
// ways), and metadata.total_size against the bytes of distinct storages' tensors. Throws CliError.
BinCheckpoint read_bin_checkpoint(const std::string& path);

// One .bin file (no index). Throws CliError.
std::vector<BinTensor> read_bin_file(const std::string& path);

// A sharded .bin's index against its shards' tensors: weight_map ↔ shard contents, both ways;
// metadata.total_size against the tensors of distinct storages (transformers' shard_checkpoint
// counts a tensor that shares an earlier one's storage once). Throws CliError naming `source`.
void check_bin_index(const CheckpointIndex& index, const std::vector<BinTensor>& tensors,
                     const std::string& source);

}  // namespace memfit::cli
