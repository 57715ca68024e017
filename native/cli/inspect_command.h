// native/cli/inspect_command.h — `memfit inspect`.
#pragma once

#include <string>

#include "checkpoint.h"
#include "gguf_command.h"

namespace memfit::cli {

struct InspectArgs {
  std::string target;  // FILE.safetensors | index.json | DIR | org/model
  bool json = false;
  GgufArgs gguf;       // a Hub repo of GGUF files: the quantization table's options
};
int run_inspect(const InspectArgs& args);

// A checkpoint file or folder (either format), else a Hub repo's safetensors headers by Range.
checkpoint::Checkpoint load_checkpoint(const std::string& target);
std::string shape_text(const Shape& s);  // "[4096, 11008]"

}  // namespace memfit::cli
