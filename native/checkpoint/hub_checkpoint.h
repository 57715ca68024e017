// native/hub_bin_checkpoint.h — a Hub repo's PyTorch .bin checkpoint read by HTTP Range only.
//
// Per .bin file, three requests in the usual case: its last 98 bytes (End Of Central Directory,
// ZIP64 locator and record), its central directory, and data.pkl with its local header (plus
// byteorder when torch 2 wrote one next to it). The storages — the weights — are never
// requested: names, dtypes and shapes come from the pickle, sizes are checked against the
// directory (core's torch_bin::read_metadata). The file offsets of the tensors stay 0.
#pragma once

#include <optional>
#include <string>

#include "bin_checkpoint.h"
#include "hub_client.h"

namespace memfit::cli {

// pytorch_model.bin.index.json and every shard it lists (cross-checked like a local index), else
// pytorch_model.bin; nullopt when the repo has neither. Throws CliError.
std::optional<BinCheckpoint> read_hub_bin_checkpoint(hub::HubClient& client, const std::string& repo);

}  // namespace memfit::cli
