// native/checkpoint/checkpoint.h — a checkpoint as memfit reads it, in either format: its files,
// one record per tensor saying where its bytes lie, and its index when sharded.
//
// Both formats reduce to the same record: a file, the absolute offset of the first element, the
// dtype, shape and strides — so `shard` copies and memfit-torch maps the bytes the same way
// whatever the format, and `estimate` / `validate` take core's name/dtype/shape view of them.
// Headers and archives are read and checked by safetensors_checkpoint and bin_checkpoint;
// open_checkpoint (local) and hub_checkpoint (the Hub) say which files a checkpoint is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memfit/format/checkpoint_index.h"
#include "memfit/format/safetensors.h"
#include "memfit/model/checkpoint_tree.h"
#include "memfit/model/dtype.h"
#include "memfit/model/tensor_tree.h"

namespace memfit::checkpoint {

enum class Format { kSafetensors, kPytorchBin };

// "safetensors" / "pytorch_bin" (the names `inspect --json` and `estimate --json` use).
const char* format_name(Format format);
// What the sizes were read from, for the text report ("safetensors headers (exact)").
const char* format_description(Format format);

struct TensorRecord {
  std::string name;                  // as stored in the checkpoint
  DType dtype = DType::kF32;
  Shape shape;
  std::vector<std::int64_t> stride;  // elements (torch's convention); C order for safetensors
  bool contiguous = true;            // C order (sizes of 1 ignored, as torch does)
  std::size_t file = 0;              // index into Checkpoint::files
  std::uint64_t data_offset = 0;     // absolute file offset of the first element (0 from the Hub)
  std::uint64_t span_bytes = 0;      // bytes from data_offset the tensor touches
  std::uint64_t nbytes = 0;          // numel × element size
  std::string storage_key;           // .bin: an equal key in one file is one shared storage
  std::uint64_t storage_offset = 0;  // .bin: elements into the storage
};

struct CheckpointFile {
  std::string path;  // as opened: a local path, or "org/name/file" on the Hub
  std::string name;  // its file name (what an index's weight_map says)
  std::optional<safetensors::Header> header;  // safetensors: the parsed header
};

struct Checkpoint {
  Format format = Format::kSafetensors;
  std::string path;                    // what the user named
  std::vector<CheckpointFile> files;   // in index (shard) order
  std::vector<TensorRecord> tensors;   // file by file, each in its file's order
  std::optional<CheckpointIndex> index;
  std::string index_name;              // "model.safetensors.index.json" when sharded
  std::vector<std::string> warnings;

  // name/dtype/shape/file of every tensor, for compare_trees and validate.
  std::vector<CheckpointTensor> tree_tensors() const;
  // The same without tied aliases (see alias_targets): each parameter once, as save_pretrained
  // stores them in safetensors — what `estimate` sizes.
  std::vector<CheckpointTensor> untied_tree_tensors() const;
  std::uint64_t total_bytes() const;
};

// For each record, the index of an earlier record whose bytes it views exactly the same way
// (same file and storage, offset, shape, stride and dtype) — a tied alias, as GPT-2's
// lm_head.weight views transformer.wte.weight's in a .bin — or npos. Safetensors have none.
std::vector<std::size_t> alias_targets(const std::vector<TensorRecord>& tensors);

}  // namespace memfit::checkpoint
