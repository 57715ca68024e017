// native/checkpoint/hub_snapshot.h — what a run of a Hub model needs, downloaded into the Hugging
// Face cache (hub_download.h): a local snapshot folder that load, forward and generate then open
// exactly as a folder the user named.
//
// The weights follow the discovery order of open_checkpoint and hub_checkpoint (transformers'
// from_pretrained): model.safetensors.index.json and its shards, else model.safetensors, else
// pytorch_model.bin.index.json and its shards, else pytorch_model.bin. Nothing else is fetched:
// no .bin beside safetensors, no ONNX, GGUF, TF or Flax files, no README.
#pragma once

#include <string>

#include "hub_download.h"

namespace memfit::checkpoint {

struct SnapshotNeeds {
  bool generation_config = false;  // generation_config.json, when the repo has one
  bool tokenizer = false;          // tokenizer.json, else vocab.json + merges.txt, else tokenizer.model;
                                   // tokenizer_config.json and special_tokens_map.json when present
};

// Fetches config.json, the weights and what `needs` asks for; returns the snapshot folder.
// Throws Failure naming the file: kEntryNotFound for a repo without config.json or weights, or
// an index naming a shard the repo lacks; offline, kNetwork for a file the cache does not hold.
std::string download_snapshot(hub::HubDownloader& hub, const SnapshotNeeds& needs);

}  // namespace memfit::checkpoint
