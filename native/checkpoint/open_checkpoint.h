// native/checkpoint_source.h — the checkpoint `memfit estimate` sizes from, in either format:
// safetensors headers, or a PyTorch .bin's pickled state dict (its weights never read).
//
// Safetensors win when a folder or a repo has both, as in transformers' from_pretrained. A
// folder's .bin is looked for under transformers' names only (pytorch_model.bin.index.json, then
// pytorch_model.bin), so a Trainer's training_args.bin is never taken for weights.
#pragma once

#include <string>
#include <vector>

#include "hub_client.h"
#include "memfit/model/checkpoint_tree.h"

namespace memfit::cli {

enum class CheckpointFormat { kSafetensors, kPytorchBin };

// "safetensors" / "pytorch_bin" (the names `inspect --json` uses).
const char* format_name(CheckpointFormat format);
// What the sizes were read from, for the text report ("safetensors headers (exact)").
const char* format_description(CheckpointFormat format);

struct CheckpointSource {
  CheckpointFormat format = CheckpointFormat::kSafetensors;
  std::vector<CheckpointTensor> tensors;
  std::vector<std::string> warnings;
};

// A regular file that names a checkpoint: *.safetensors, *.bin, or an *.index.json.
bool is_checkpoint_file(const std::string& path);
// True when the folder holds weights in either format.
bool has_local_weights(const std::string& dir);
// A checkpoint file, an index, or a folder. Throws CliError.
CheckpointSource read_local_source(const std::string& path);
// The repo's safetensors (headers by Range), else its .bin (directory and pickle by Range).
// Throws CliError; kExitEntryNotFound, naming the four files looked for, when it has neither.
CheckpointSource read_hub_source(hub::HubClient& client, const std::string& repo);

}  // namespace memfit::cli
