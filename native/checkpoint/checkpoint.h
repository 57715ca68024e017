// native/torch/checkpoint_source.h — where every tensor's bytes lie in a checkpoint's files, for
// safetensors and .bin alike (no LibTorch here).
//
// Both formats reduce to the same record: a file, the absolute offset of the first element, the
// dtype, shape and strides — so the loader maps the file and views the bytes in place
// (torch::from_blob), whatever the format. Headers/archives are read and checked by
// checkpoint_reader (safetensors) and bin_checkpoint (.bin); nothing here reads weights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memfit/model/checkpoint_tree.h"
#include "memfit/model/dtype.h"
#include "memfit/model/tensor_tree.h"

namespace memfit::torchrt {

struct WeightRecord {
  std::string name;                  // as stored in the checkpoint
  DType dtype = DType::kF32;
  Shape shape;
  std::vector<std::int64_t> stride;  // elements, C order for safetensors
  std::size_t file = 0;              // index into CheckpointSource::files
  std::uint64_t data_offset = 0;     // absolute file offset of the first element
  std::uint64_t span_bytes = 0;      // bytes from data_offset the tensor touches
  std::uint64_t nbytes = 0;          // numel × element size
  std::string storage_key;           // .bin: equal key (in one file) = one shared storage
};

struct CheckpointSource {
  enum class Format { kSafetensors, kBin } format = Format::kSafetensors;
  std::string path;                  // what the user named
  std::vector<std::string> files;    // full paths, in index/shard order
  std::vector<WeightRecord> records; // file order (shard by shard)
  std::vector<std::string> warnings;
  std::vector<CheckpointTensor> tensors() const;  // for compare_trees (name/dtype/shape/shard)
  std::uint64_t total_bytes() const;
  const char* format_name() const { return format == Format::kSafetensors ? "safetensors" : "bin"; }
};

// A .safetensors file, a *.index.json, a .bin file, or a folder (safetensors preferred, else
// .bin). Throws cli::CliError naming the file (missing shard, truncated file, bad header …).
CheckpointSource open_checkpoint(const std::string& path);

}  // namespace memfit::torchrt
