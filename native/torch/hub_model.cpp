#include "hub_model.h"

#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "failure.h"
#include "hub_client.h"
#include "memfit/report/convert_bytes.h"
#include "progress_bar.h"

namespace memfit::torchrt {

std::string local_model(const std::string& model, const PlacementArgs& placement, const checkpoint::SnapshotNeeds& needs) {
  const std::string& revision = placement.revision;
  std::error_code ec;
  if (std::filesystem::exists(model, ec)) {
    if (!revision.empty())
      throw Failure{FailureKind::kUsage, fmt::format("--revision applies to a Hub model id; {} is a local path", model)};
    return model;
  }
  if (!hub::looks_like_repo_id(model))
    throw Failure{FailureKind::kFile, fmt::format("{}: no such file or folder, and not a Hub model id (expected "
                                                  "org/name)", model)};
  hub::HubOptions options = hub::HubOptions::from_environment();
  if (!placement.token.empty()) options.token = placement.token;
  hub::HubClient client(options);
  std::unique_ptr<ProgressBar> bar;
  hub::DownloadEvents events;
  events.begin = [&](const std::string& file, std::uint64_t size, std::uint64_t resumed_from) {
    fmt::print(stderr, "memfit: downloading {} of {} ({}{})\n", file, model, convert_bytes(static_cast<double>(size)),
               resumed_from ? fmt::format(", resuming from {}", convert_bytes(static_cast<double>(resumed_from))) : "");
    bar = std::make_unique<ProgressBar>(file);
  };
  events.progress = [&](std::uint64_t done, std::uint64_t total) {
    if (bar) bar->update(done, total);
  };
  events.end = [&] { bar.reset(); };
  events.warn = [](const std::string& message) { fmt::print(stderr, "memfit: warning: {}\n", message); };
  hub::HubDownloader downloader(client, hub::HubCache(options.hf_cache, model),
                                model, revision.empty() ? "main" : revision, std::move(events));
  return checkpoint::download_snapshot(downloader, needs);
}

}  // namespace memfit::torchrt
