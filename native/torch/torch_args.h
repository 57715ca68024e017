// native/torch/torch_args.h — memfit-torch's command line: `load DIR|ORG/NAME [options]` and
// `forward DIR --tokens IDS [options]`, `generate DIR --prompt TEXT [options]`, as `memfit` hands
// them over.
//
// A parser of its own, so memfit-torch links no CLI library: `--name value` or `--name=value`,
// flags without a value, one positional DIR (or Hub id), `--help`. Numbers are checked against
// their ranges.
#pragma once

#include <string>

#include "torch_commands.h"

namespace memfit::torchrt {

struct TorchCommand {
  enum class Kind { kLoad, kForward, kGenerate, kHelp } kind = Kind::kHelp;
  LoadArgs load;
  ForwardArgs forward;
  GenerateArgs generate;
  std::string help;  // kHelp: the text to print
};

// argv as main() gets it. Throws Failure(kUsage) naming the argument for anything it cannot take.
TorchCommand parse_torch_command(int argc, const char* const* argv);

}  // namespace memfit::torchrt
