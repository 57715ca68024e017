// native/checkpoint/open_checkpoint.h — which files a local path's checkpoint is: one rule for a
// file, an index and a folder (hub_checkpoint.h applies the same order to a Hub repo).
//
// A folder is read as transformers' from_pretrained reads it: safetensors first
// (model.safetensors.index.json, else its *.safetensors files), else the .bin under transformers'
// names only (pytorch_model.bin.index.json, then pytorch_model.bin) — so a Trainer's
// training_args.bin is never taken for weights. A file is read by its name: *.bin and
// *.bin.index.json as .bin, anything else as safetensors.
#pragma once

#include <string>

#include "checkpoint.h"

namespace memfit::checkpoint {

// A regular file that names a checkpoint: *.safetensors, *.bin, or an *.index.json.
bool is_checkpoint_file(const std::string& path);
// True when the folder holds weights in either format.
bool has_weights(const std::string& dir);
// A checkpoint file, an index, or a folder. Throws Failure (kFile for a path that does not exist
// or a folder without weights, which is reported as having no safetensors checkpoint).
Checkpoint open_checkpoint(const std::string& path);

}  // namespace memfit::checkpoint
