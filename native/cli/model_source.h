// native/model_source.h — turn the MODEL argument (file, folder or Hub id) into config text.
#pragma once

#include <string>

#include "memfit/model/estimate_request.h"

#include "hub_client.h"

namespace memfit::cli {

// A failure with the exit code it maps to and one clear line for stderr.
struct CliError {
  int exit_code;
  std::string message;
};

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
};

// Reads a whole local file; throws CliError(kExitFile) naming the path.
std::string read_file(const std::string& path);

ModelSource resolve_model(const std::string& arg, const ResolveOptions& opt,
                          hub::HubClient* client);

}  // namespace memfit::cli
