// memfit/format/checkpoint_index.h — sharded checkpoint indexes (no I/O).
//
// `model.safetensors.index.json` / `pytorch_model.bin.index.json`:
// {"metadata": {"total_size": N, ...}, "weight_map": {tensor: shard file}}.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memfit/error.h"
#include "memfit/format/safetensors.h"

namespace memfit {

struct CheckpointIndex {
  std::vector<std::pair<std::string, std::string>> weight_map;  // tensor → shard, file order
  std::vector<std::string> shards;                              // first-appearance order
  std::optional<std::uint64_t> total_size;                      // metadata.total_size
};

Result<CheckpointIndex> parse_index(std::string_view text, std::string_view source);

// Shard name → its parsed header, in the index's shard order.
using ShardHeaders = std::vector<std::pair<std::string, safetensors::Header>>;

// Checks that every tensor of the weight map is in the shard it names and that every shard
// tensor is listed; and that total_size (when present) equals the sum of tensor bytes.
Result<bool> check_index_against_shards(const CheckpointIndex& index, const ShardHeaders& shards,
                                        std::string_view source);

}  // namespace memfit
