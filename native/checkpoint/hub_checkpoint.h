// native/checkpoint/hub_checkpoint.h — a Hub repo's checkpoint read by HTTP Range only: its
// metadata, never its weights.
//
// safetensors: each file's header (one request when the first 64 KiB hold it, else one more).
// .bin: per file, three requests in the usual case — its last 98 bytes (End Of Central
// Directory, ZIP64 locator and record), its central directory, and data.pkl with its local header
// (plus byteorder when torch 2 wrote one next to it). Names, dtypes and shapes come from the
// pickle, sizes are checked against the directory (core's torch_bin::read_metadata); the file
// offsets of the records stay 0.
//
// Errors throw Failure: the Hub's kinds (gated, not found, network) or the format's.
#pragma once

#include <optional>
#include <string>

#include "checkpoint.h"
#include "hub_client.h"

namespace memfit::checkpoint {

// The repo's model.safetensors.index.json and its shards, else model.safetensors; nullopt when it
// has neither.
std::optional<Checkpoint> find_hub_safetensors(hub::HubClient& client, const std::string& repo);
// The same for pytorch_model.bin.index.json, else pytorch_model.bin.
std::optional<Checkpoint> find_hub_bin(hub::HubClient& client, const std::string& repo);

// The repo's weights in transformers' order: safetensors, else .bin. Failure(kEntryNotFound),
// naming the four files looked for, when it has neither.
Checkpoint open_hub_checkpoint(hub::HubClient& client, const std::string& repo);
// Its safetensors only; Failure(kEntryNotFound) when it has none.
Checkpoint open_hub_safetensors(hub::HubClient& client, const std::string& repo);

}  // namespace memfit::checkpoint
