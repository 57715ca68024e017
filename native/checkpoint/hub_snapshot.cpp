#include "hub_snapshot.h"

#include <fmt/format.h>

#include "bin_checkpoint.h"
#include "failure.h"
#include "file_reader.h"
#include "memfit/format/checkpoint_index.h"
#include "safetensors_checkpoint.h"

namespace memfit::checkpoint {
namespace {

// A file the run cannot do without: offline, the cache lacks it; online, the repo does.
[[noreturn]] void missing(const hub::HubDownloader& hub, const std::string& what, const std::string& detail = {}) {
  if (hub.offline())
    throw Failure{FailureKind::kNetwork,
                  fmt::format("{}, and {} of `{}` (revision `{}`) is not in the cache ({}){}", hub.offline_reason(),
                              what, hub.repo(), hub.revision(), hub.cache().repo_folder(), detail)};
  throw Failure{FailureKind::kEntryNotFound,
                fmt::format("model `{}` has no {} at revision `{}`{}", hub.repo(), what, hub.revision(), detail)};
}

// An index and every shard it names; false when the repo has no such index.
bool fetch_sharded(hub::HubDownloader& hub, const char* index_name) {
  const auto index = hub.fetch(index_name);
  if (!index) return false;
  const CheckpointIndex parsed = value_or_raise(parse_index(io::read_file(*index), hub.repo() + "/" + index_name));
  for (const auto& shard : parsed.shards)
    if (!hub.fetch(shard)) missing(hub, fmt::format("shard `{}`", shard), fmt::format(", which its {} names", index_name));
  return true;
}

void fetch_weights(hub::HubDownloader& hub) {
  if (fetch_sharded(hub, kSafetensorsIndexName) || hub.fetch("model.safetensors")) return;
  if (fetch_sharded(hub, kBinIndexName) || hub.fetch(kBinName)) return;
  missing(hub, fmt::format("weights memfit can read ({}, model.safetensors, {} or {})", kSafetensorsIndexName,
                           kBinIndexName, kBinName));
}

// load_tokenizer's order, then tokenizer.model (SentencePiece) as transformers' slow tokenizers.
void fetch_tokenizer(hub::HubDownloader& hub) {
  if (!hub.fetch("tokenizer.json") && !(hub.fetch("vocab.json") && hub.fetch("merges.txt")))
    hub.fetch("tokenizer.model");
  for (const char* optional : {"tokenizer_config.json", "special_tokens_map.json"}) hub.fetch(optional);
}

}  // namespace

std::string download_snapshot(hub::HubDownloader& hub, const SnapshotNeeds& needs) {
  if (!hub.fetch("config.json")) missing(hub, "config.json");  // first: its answer pins the commit
  fetch_weights(hub);
  if (needs.generation_config) hub.fetch("generation_config.json");
  if (needs.tokenizer) fetch_tokenizer(hub);
  return hub.folder();
}

}  // namespace memfit::checkpoint
