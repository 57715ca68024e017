// native/cli/validate_command.h — `memfit validate`: does a checkpoint hold what its config implies?
#pragma once

#include <string>

namespace memfit::cli {

struct ValidateArgs {
  std::string config;      // config.json | DIR | org/model (alone: the repo's config and index)
  std::string checkpoint;  // model.safetensors.index.json (bare, or beside its shards) |
                           // FILE.safetensors | DIR | org/model; "" with a Hub id or folder
  std::string class_name;
  bool json = false;
};
int run_validate(const ValidateArgs& args);

}  // namespace memfit::cli
