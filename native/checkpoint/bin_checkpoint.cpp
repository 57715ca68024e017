#include "bin_checkpoint.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "exit_codes.h"
#include "file_reader.h"
#include "memfit/format/torch_bin.h"
#include "model_source.h"

namespace memfit::cli {
namespace fs = std::filesystem;
namespace {

constexpr const char* kBinIndexName = "pytorch_model.bin.index.json";
constexpr const char* kBinName = "pytorch_model.bin";

[[noreturn]] void raise(const Error& e) { throw CliError{exit_code_for(e.code()), e.message()}; }
[[noreturn]] void raise(ErrorCode code, std::string message) { raise(Error(code, std::move(message))); }

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<fs::path> bin_files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".bin" && e.is_regular_file(ec)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

void check_bin_index(const CheckpointIndex& index, const std::vector<BinTensor>& tensors,
                     const std::string& source) {
  std::unordered_map<std::string, std::string> home;
  for (const auto& t : tensors) {
    const auto [it, fresh] = home.emplace(t.name, t.shard);
    if (!fresh)
      raise(ErrorCode::kIndexDuplicateName,
            fmt::format("{}: tensor '{}' is in both '{}' and '{}'", source, t.name, it->second, t.shard));
  }
  std::set<std::string> listed;
  for (const auto& [name, shard] : index.weight_map) {
    listed.insert(name);
    const auto it = home.find(name);
    if (it == home.end() || it->second != shard)
      raise(ErrorCode::kIndexTensorNotInShard,
            fmt::format("{}: weight_map puts tensor '{}' in '{}', which does not hold it{}", source,
                        name, shard, it == home.end() ? "" : fmt::format(" (it is in '{}')", it->second)));
  }
  std::uint64_t total = 0;
  std::set<std::pair<std::string, std::string>> storages;
  for (const auto& t : tensors) {
    if (!listed.count(t.name))
      raise(ErrorCode::kIndexTensorNotListed,
            fmt::format("{}: shard '{}' holds tensor '{}', which weight_map does not list", source,
                        t.shard, t.name));
    if (storages.emplace(t.file, t.storage_key).second) total += t.nbytes;
  }
  if (index.total_size && *index.total_size != total)
    raise(ErrorCode::kIndexTotalSizeMismatch,
          fmt::format("{}: metadata.total_size is {}, the shards' tensors (each storage once) add up "
                      "to {} bytes", source, *index.total_size, total));
}

std::vector<CheckpointTensor> BinCheckpoint::checkpoint_tensors() const {
  std::vector<CheckpointTensor> out;
  out.reserve(tensors.size());
  for (const auto& t : tensors) out.push_back({t.name, t.dtype, t.shape, t.shard});
  return out;
}

std::vector<CheckpointTensor> BinCheckpoint::untied_checkpoint_tensors() const {
  std::vector<CheckpointTensor> out;
  out.reserve(tensors.size());
  std::unordered_set<std::string> seen;
  for (const auto& t : tensors)
    if (seen.insert(tensor_view_key(t.file + "|" + t.storage_key, t.storage_offset, t.shape, t.stride,
                                    t.dtype)).second)
      out.push_back({t.name, t.dtype, t.shape, t.shard});
  return out;
}

std::string tensor_view_key(const std::string& storage, std::uint64_t storage_offset,
                            const Shape& shape, const std::vector<std::int64_t>& stride, DType dtype) {
  return fmt::format("{}@{}:{}:{}:{}", storage, storage_offset, fmt::join(shape, ","),
                     fmt::join(stride, ","), static_cast<int>(dtype));
}

bool has_local_bin_checkpoint(const std::string& dir) {
  std::error_code ec;
  if (fs::is_regular_file(fs::path(dir) / kBinIndexName, ec)) return true;
  return !bin_files_in(dir).empty();
}

bool is_bin_checkpoint_path(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (!has_local_bin_checkpoint(path)) return false;
    // safetensors win when both are present, as in transformers' from_pretrained
    if (fs::is_regular_file(fs::path(path) / "model.safetensors.index.json", ec)) return false;
    for (const auto& e : fs::directory_iterator(path, ec))
      if (e.path().extension() == ".safetensors") return false;
    return true;
  }
  return ends_with(path, ".bin") || ends_with(path, ".bin.index.json");
}

std::vector<BinTensor> read_bin_file(const std::string& path) {
  auto reader = std::make_shared<FileReader>(path);
  const Result<torch_bin::Checkpoint> ck = torch_bin::read(file_byte_source(reader));
  if (!ck) raise(ck.error());
  const std::string shard = fs::path(path).filename().string();
  std::vector<BinTensor> out;
  out.reserve(ck->tensors.size());
  for (const auto& t : ck->tensors) {
    BinTensor b;
    static_cast<torch_bin::Tensor&>(b) = t;
    b.file = path;
    b.shard = shard;
    out.push_back(std::move(b));
  }
  return out;
}

BinCheckpoint read_bin_checkpoint(const std::string& path) {
  std::error_code ec;
  fs::path p(path);
  if (fs::is_directory(p, ec)) {
    if (fs::is_regular_file(p / kBinIndexName, ec)) {
      p /= kBinIndexName;
    } else if (fs::is_regular_file(p / kBinName, ec)) {
      p /= kBinName;
    } else {
      const auto files = bin_files_in(p);
      if (files.empty())
        throw CliError{kExitFile, fmt::format("{}: no .bin checkpoint in this folder", path)};
      if (files.size() > 1)
        throw CliError{kExitFile, fmt::format("{}: {} .bin files and no {}: which one is meant is "
                                              "unclear", path, files.size(), kBinIndexName)};
      p = files.front();
    }
  } else if (!fs::exists(p, ec)) {
    throw CliError{kExitFile, fmt::format("{}: no such file or folder", path)};
  }

  BinCheckpoint ck;
  if (ends_with(p.string(), ".json")) {
    const std::string source = p.string();
    Result<CheckpointIndex> index = parse_index(read_file(source), source);
    if (!index) raise(index.error());
    ck.index = std::move(index).value();
    ck.index_name = p.filename().string();
    for (const auto& shard : ck.index->shards) {
      const fs::path shard_path = p.parent_path() / shard;
      if (!fs::is_regular_file(shard_path, ec))
        throw CliError{kExitFile, fmt::format("{}: shard '{}' listed in the index is missing ({})",
                                              source, shard, shard_path.string())};
      auto tensors = read_bin_file(shard_path.string());
      ck.files.push_back(shard_path.string());
      ck.tensors.insert(ck.tensors.end(), std::make_move_iterator(tensors.begin()),
                        std::make_move_iterator(tensors.end()));
    }
    check_bin_index(*ck.index, ck.tensors, source);
    return ck;
  }
  ck.tensors = read_bin_file(p.string());
  ck.files.push_back(p.string());
  return ck;
}

}  // namespace memfit::cli
