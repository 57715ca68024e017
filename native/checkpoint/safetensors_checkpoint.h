// native/checkpoint/safetensors_checkpoint.h — safetensors checkpoints read by their headers only.
//
// Local files: 8 bytes, then the N header bytes — never the weights, so the time does not grow
// with the checkpoint. Sharded folders: the index, then every shard's header, cross-checked. (The
// Hub's files are read by HTTP Range in hub_checkpoint, through the same two functions below.)
#pragma once

#include <functional>
#include <string>

#include "checkpoint.h"
#include "memfit/format/safetensors.h"

namespace memfit::checkpoint {

inline constexpr const char* kSafetensorsIndexName = "model.safetensors.index.json";

// True when `dir` holds safetensors weights (an index or *.safetensors files).
bool has_safetensors(const std::string& dir);
// A .safetensors file, an index file, or a folder (its index, else all its *.safetensors).
// Throws Failure.
Checkpoint read_safetensors(const std::string& path);

// Appends one file and a record per tensor of its header.
void add_safetensors_file(Checkpoint& ck, std::string path, std::string name, const safetensors::Header& header);

// The shards an index lists, each read by `read_shard(name, &path)` (which sets the path it read),
// cross-checked against the index. `index_source` names the index in messages.
using ShardHeaderReader = std::function<safetensors::Header(const std::string& shard, std::string* path)>;
Checkpoint read_sharded_safetensors(const std::string& index_source, const std::string& index_text,
                                    const ShardHeaderReader& read_shard);

}  // namespace memfit::checkpoint
