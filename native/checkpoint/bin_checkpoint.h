// native/checkpoint/bin_checkpoint.h — PyTorch `.bin` checkpoints (torch.save zip archives) read
// from disk, without Python and without LibTorch.
//
// What is read: the zip's tail and central directory, each entry's local header, `<stem>/data.pkl`
// (unpickled by core's restricted unpickler: only OrderedDict, _rebuild_tensor_v2,
// _rebuild_parameter[_with_state] and torch.*Storage are accepted; any other global is refused
// before anything is built, like torch.load(weights_only=True)). The storages
// (`<stem>/data/<key>`) are never read here: each tensor record gets the absolute file offset of
// its first element, so a loader can mmap the file and view the bytes in place:
//   io::MappedFile f(ck.files[t.file].path);              // MAP_PRIVATE
//   auto* p = f.at(t.data_offset, t.span_bytes, t.name);
//   torch::from_blob(p, t.shape, t.stride, options.dtype(...))   // zero-copy view
// Tied weights (GPT-2's lm_head.weight and transformer.wte.weight) are two records with the same
// (file, storage_key): create the storage once and view it twice to keep them tied.
//
// All offsets, shapes and strides were checked: [data_offset, data_offset + span_bytes) lies
// inside the storage, which lies inside the file (and inside its zip entry).
//
// Errors throw Failure: kFile for unreadable files, the kind of the core ErrorCode (invalid
// input / unsupported) for malformed or hostile archives and pickles.
#pragma once

#include <string>

#include "checkpoint.h"
#include "memfit/format/checkpoint_index.h"
#include "memfit/format/torch_bin.h"

namespace memfit::checkpoint {

inline constexpr const char* kBinIndexName = "pytorch_model.bin.index.json";
inline constexpr const char* kBinName = "pytorch_model.bin";

// True for a path that names a .bin checkpoint file: *.bin or *.bin.index.json.
bool is_bin_path(const std::string& path);

// Reads a .bin file or a *.bin.index.json. Sharded: every weight_map entry is checked against its
// shard's keys (both ways), and metadata.total_size against the bytes of distinct storages'
// tensors. Throws Failure.
Checkpoint read_bin(const std::string& path);

// Appends one .bin file (`path` as opened, `name` its file name) and its tensors.
void add_bin_file(Checkpoint& ck, std::string path, std::string name, const torch_bin::Checkpoint& file);

// A sharded .bin's index against its shards' tensors: weight_map ↔ shard contents, both ways;
// metadata.total_size against the tensors of distinct storages (transformers' shard_checkpoint
// counts a tensor that shares an earlier one's storage once). Throws Failure naming `source`.
void check_bin_index(const Checkpoint& ck, const std::string& source);

}  // namespace memfit::checkpoint
