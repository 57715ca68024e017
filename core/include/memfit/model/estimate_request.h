// memfit/model/estimate_request.h — what a caller asks about a model: its config, name, library,
// the mode and class, and (memfit's exact path) the checkpoint's tensors. build_model() turns it
// into a Model.
#pragma once

#include <string>
#include <vector>

#include "memfit/model/checkpoint_tree.h"

namespace memfit {

enum class Mode {
  kAccelerate,  // reproduce `accelerate estimate-memory` 0.30.1 + transformers 4.40 exactly
  kMemfit,      // memfit's own, honest figures
};

struct EstimateRequest {
  std::string config_text;  // contents of config.json; may be empty for timm (name is enough)
  std::string name;         // model id/path: the table title, and the timm variant
  std::string library;      // "transformers", "timm", or "" to detect
  Mode mode = Mode::kMemfit;
  std::vector<std::string> dtypes;  // empty: the mode's default list
  std::string class_override;       // --class
  // Tensors of the checkpoint's headers (safetensors, or a .bin's pickled state dict), when
  // known: memfit's exact path. checkpoint_format says which ("safetensors", "pytorch_bin").
  std::vector<CheckpointTensor> checkpoint;
  std::string checkpoint_format = "safetensors";
  enum class Source { kAuto, kConfig, kCheckpoint } source = Source::kAuto;
};

}  // namespace memfit
