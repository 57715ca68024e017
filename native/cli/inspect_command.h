// native/cli/inspect_command.h — `memfit inspect` and `memfit validate`.
#pragma once

#include <string>

namespace memfit::cli {

struct InspectArgs {
  std::string target;  // FILE.safetensors | index.json | DIR | org/model
  bool json = false;
};
int run_inspect(const InspectArgs& args);

struct ValidateArgs {
  std::string config;      // config.json | DIR | org/model
  std::string checkpoint;  // FILE.safetensors | index.json | DIR | org/model
  std::string class_name;
  bool json = false;
};
int run_validate(const ValidateArgs& args);

}  // namespace memfit::cli
