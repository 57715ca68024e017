#include "open_checkpoint.h"

#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "bin_checkpoint.h"
#include "failure.h"
#include "safetensors_checkpoint.h"

namespace memfit::checkpoint {
namespace fs = std::filesystem;
namespace {

// transformers' WEIGHTS_INDEX_NAME, else WEIGHTS_NAME, in `dir`.
std::optional<fs::path> transformers_bin_weights(const fs::path& dir) {
  std::error_code ec;
  for (const char* name : {kBinIndexName, kBinName})
    if (fs::is_regular_file(dir / name, ec)) return dir / name;
  return std::nullopt;
}

}  // namespace

bool is_checkpoint_file(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  const fs::path p(path);
  return p.extension() == ".safetensors" || is_bin_path(path) ||
         (p.extension() == ".json" && p.stem().extension() == ".index");
}

bool has_weights(const std::string& dir) {
  return has_safetensors(dir) || transformers_bin_weights(dir).has_value();
}

Checkpoint open_checkpoint(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Failure{FailureKind::kFile, fmt::format("{}: no such file or folder", path)};
  if (fs::is_directory(path, ec)) {
    if (const auto bin = has_safetensors(path) ? std::nullopt : transformers_bin_weights(path)) {
      Checkpoint ck = read_bin(bin->string());
      ck.path = path;
      return ck;
    }
    return read_safetensors(path);  // a folder with neither: "no safetensors checkpoint in this folder"
  }
  if (is_bin_path(path)) return read_bin(path);
  return read_safetensors(path);
}

}  // namespace memfit::checkpoint
