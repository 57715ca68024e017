// native/checkpoint_reader.h — safetensors headers from disk or the Hub, reading only headers.
//
// Local files: 8 bytes, then the N header bytes — never the weights, so the time does not grow
// with the checkpoint. Hub files: HTTP Range requests (one when the first range already holds
// the whole header). Sharded folders/repos: the index, then every shard's header, cross-checked.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hub_client.h"
#include "memfit/format/checkpoint_index.h"
#include "memfit/format/safetensors.h"
#include "memfit/model/checkpoint_tree.h"

namespace memfit::cli {

struct Checkpoint {
  std::vector<std::pair<std::string, safetensors::Header>> files;  // file name → header
  std::optional<CheckpointIndex> index;
  std::string index_name;  // "model.safetensors.index.json" when sharded
  std::vector<std::string> warnings;
  std::vector<CheckpointTensor> tensors() const { return checkpoint_tensors(files); }
};

// True when `dir` holds safetensors weights (an index or *.safetensors files).
bool has_local_checkpoint(const std::string& dir);
// A .safetensors file, an index file, or a folder. Throws CliError.
Checkpoint read_local_checkpoint(const std::string& path);
// The Hub repo's model.safetensors.index.json, else model.safetensors. Throws CliError;
// kExitEntryNotFound when the repo has no safetensors weights.
Checkpoint read_hub_checkpoint(hub::HubClient& client, const std::string& repo);
// The same, but nullopt when the repo has neither file (so another format can be tried).
std::optional<Checkpoint> find_hub_checkpoint(hub::HubClient& client, const std::string& repo);

}  // namespace memfit::cli
