#include "model_source.h"

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "file_reader.h"

namespace memfit::cli {
namespace fs = std::filesystem;
namespace {

std::string library_from_model_info(const std::string& info_text, const std::string& repo) {
  const auto info = nlohmann::json::parse(info_text, nullptr, false);
  if (info.is_discarded() || !info.is_object())
    throw CliError{kExitNetwork, fmt::format("api/models/{}: the Hub answered with something "
                                             "that is not a JSON object", repo)};
  auto it = info.find("library_name");
  if (it == info.end() || !it->is_string() || it->get<std::string>().empty())
    throw CliError{kExitNoLibrary,
                   fmt::format("Model `{}` does not have any library metadata on the Hub, please "
                               "manually pass in a `--library_name` to use (such as "
                               "`transformers`)",
                               repo)};
  return it->get<std::string>();
}

}  // namespace

ModelSource resolve_model(const std::string& arg, const ResolveOptions& opt,
                          hub::HubClient* client) {
  ModelSource src;
  src.library = opt.library;
  std::error_code ec;
  if (fs::is_regular_file(arg, ec)) {
    src.origin = "file";
    src.config_text = io::read_file(arg);
    src.name = opt.name.empty() ? arg : opt.name;
    return src;
  }
  if (fs::is_directory(arg, ec)) {
    src.origin = "directory";
    const fs::path config = fs::path(arg) / "config.json";
    if (!fs::is_regular_file(config, ec))
      throw CliError{kExitFile, fmt::format("{}: the folder has no config.json", arg)};
    src.config_text = io::read_file(config.string());
    src.name = opt.name.empty() ? arg : opt.name;
    return src;
  }
  if (!hub::looks_like_repo_id(arg))
    throw CliError{kExitFile, fmt::format("{}: no such file or folder, and not a Hub model id "
                                          "(expected org/name)", arg)};
  src.origin = "hub";
  src.name = opt.name.empty() ? arg : opt.name;
  try {
    if (src.library.empty() && opt.hub_library && !opt.hub_library->empty()) src.library = *opt.hub_library;
    if (src.library.empty()) src.library = library_from_model_info(client->fetch_model_info(arg), arg);
    if (src.library != "transformers" && src.library != "timm")
      throw CliError{kExitUnsupported,
                     fmt::format("Library `{}` is not supported yet (model `{}`); supported: "
                                 "timm, transformers",
                                 src.library, arg)};
    try {
      src.config_text = client->fetch_file(arg, "config.json");
    } catch (const hub::HubError& e) {
      // A timm model can be built from its name alone (as timm.create_model does).
      if (e.kind != hub::HubErrorKind::kEntryNotFound || src.library != "timm") throw;
    }
  } catch (const hub::HubError& e) {
    throw e.failure();
  }
  return src;
}

EstimateRequest model_request(const ModelSource& src, const std::string& compat, const std::string& class_name) {
  if (!compat.empty() && compat != "accelerate")
    throw CliError{kExitUsage, fmt::format("--compat: unknown value '{}' (only 'accelerate')", compat)};
  EstimateRequest req;
  req.config_text = src.config_text;
  req.name = src.name;
  req.library = src.library;
  req.mode = compat == "accelerate" ? Mode::kAccelerate : Mode::kMemfit;
  req.class_override = class_name;
  return req;
}

}  // namespace memfit::cli
