// native/torch/hub_model.h — the MODEL argument of load, forward and generate: a local folder or
// file as it is, else a Hub id (ORG/NAME) whose snapshot is downloaded into the Hugging Face
// cache first (checkpoint/hub_snapshot.h), with a line per file and a progress bar on stderr.
#pragma once

#include <string>

#include "hub_snapshot.h"
#include "torch_commands.h"

namespace memfit::torchrt {

// The local path to run. --revision ("" = main) and --token ("" = HF_TOKEN, the token file) apply
// to a Hub id only: with a local path, --revision is a usage error. Throws Failure (kFile for a
// path that is neither, the Hub's kinds, kNetwork).
std::string local_model(const std::string& model, const PlacementArgs& placement, const checkpoint::SnapshotNeeds& needs);

}  // namespace memfit::torchrt
