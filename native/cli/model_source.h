// native/cli/model_source.h — turn the MODEL argument (file, folder or Hub id) into config text.
#pragma once

#include <string>

#include "memfit/model/estimate_request.h"

#include "cli_error.h"
#include "hub_client.h"

namespace memfit::cli {

struct ModelSource {
  std::string config_text;  // config.json contents; empty for a timm model known by name only
  std::string name;         // what the table title shows (the id, or --name)
  std::string library;      // from --library_name or the Hub's metadata; "" = detect
  std::string origin;       // "file", "directory" or "hub"
};

// The core request for a resolved model: --compat ("" or "accelerate": accelerate's class and
// 4.40 buffers; anything else is a usage error) and --class.
EstimateRequest model_request(const ModelSource& src, const std::string& compat, const std::string& class_name);

struct ResolveOptions {
  std::string library;  // --library_name
  std::string name;     // --name (title override)
  // The Hub's answer for the repo, when the caller has it already (repo_command.h's list_repo):
  // its library_name is used instead of asking the Hub again.
  const std::string* hub_library = nullptr;
};

ModelSource resolve_model(const std::string& arg, const ResolveOptions& opt,
                          hub::HubClient* client);

}  // namespace memfit::cli
