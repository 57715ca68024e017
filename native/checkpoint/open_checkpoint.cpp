#include "checkpoint_source.h"

#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "bin_checkpoint.h"
#include "checkpoint_reader.h"
#include "exit_codes.h"
#include "hub_bin_checkpoint.h"
#include "model_source.h"

namespace memfit::cli {
namespace fs = std::filesystem;
namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// transformers' WEIGHTS_INDEX_NAME, else WEIGHTS_NAME, in `dir`.
std::optional<fs::path> transformers_bin_weights(const fs::path& dir) {
  std::error_code ec;
  for (const char* name : {"pytorch_model.bin.index.json", "pytorch_model.bin"})
    if (fs::is_regular_file(dir / name, ec)) return dir / name;
  return std::nullopt;
}

bool is_bin_path(const std::string& path) {
  return ends_with(path, ".bin") || ends_with(path, ".bin.index.json");
}

CheckpointSource from_bin(const BinCheckpoint& ck) {
  // A .bin keeps tied weights under both names (one storage); safetensors keep the first only.
  return {CheckpointFormat::kPytorchBin, ck.untied_checkpoint_tensors(), ck.warnings};
}

CheckpointSource from_safetensors(const Checkpoint& ck) {
  return {CheckpointFormat::kSafetensors, ck.tensors(), ck.warnings};
}

}  // namespace

const char* format_name(CheckpointFormat format) {
  return format == CheckpointFormat::kPytorchBin ? "pytorch_bin" : "safetensors";
}

const char* format_description(CheckpointFormat format) {
  return format == CheckpointFormat::kPytorchBin
             ? "PyTorch .bin checkpoint (pickled state dict, exact)"
             : "safetensors headers (exact)";
}

bool is_checkpoint_file(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  return ends_with(path, ".safetensors") || ends_with(path, ".bin") || ends_with(path, ".index.json");
}

bool has_local_weights(const std::string& dir) {
  return has_local_checkpoint(dir) || transformers_bin_weights(dir).has_value();
}

CheckpointSource read_local_source(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (has_local_checkpoint(path)) return from_safetensors(read_local_checkpoint(path));
    if (const auto bin = transformers_bin_weights(path)) return from_bin(read_bin_checkpoint(bin->string()));
    throw CliError{kExitFile, fmt::format("{}: no checkpoint in this folder (*.safetensors, "
                                          "model.safetensors.index.json, pytorch_model.bin or "
                                          "pytorch_model.bin.index.json)", path)};
  }
  if (is_bin_path(path)) return from_bin(read_bin_checkpoint(path));
  return from_safetensors(read_local_checkpoint(path));
}

CheckpointSource read_hub_source(hub::HubClient& client, const std::string& repo) {
  if (std::optional<Checkpoint> st = find_hub_checkpoint(client, repo)) return from_safetensors(*st);
  if (std::optional<BinCheckpoint> bin = read_hub_bin_checkpoint(client, repo)) return from_bin(*bin);
  throw CliError{kExitEntryNotFound,
                 fmt::format("model `{}` has no weights memfit can read (model.safetensors.index.json, "
                             "model.safetensors, pytorch_model.bin.index.json or pytorch_model.bin)",
                             repo)};
}

}  // namespace memfit::cli
