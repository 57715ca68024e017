#include "bin_checkpoint.h"

#include <filesystem>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "failure.h"
#include "file_reader.h"

namespace memfit::checkpoint {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void raise(ErrorCode code, std::string message) { memfit::raise(Error(code, std::move(message))); }

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void read_bin_file(Checkpoint& ck, const std::string& path) {
  auto reader = std::make_shared<io::FileReader>(path);
  add_bin_file(ck, path, fs::path(path).filename().string(),
               value_or_raise(torch_bin::read(io::file_byte_source(reader))));
}

}  // namespace

void add_bin_file(Checkpoint& ck, std::string path, std::string name, const torch_bin::Checkpoint& file) {
  const std::size_t index = ck.files.size();
  for (const auto& t : file.tensors)
    ck.tensors.push_back({t.name, t.dtype, t.shape, t.stride, t.contiguous, index, t.data_offset, t.span_bytes,
                          t.nbytes, t.storage_key, t.storage_offset});
  ck.files.push_back({std::move(path), std::move(name), std::nullopt});
}

void check_bin_index(const Checkpoint& ck, const std::string& source) {
  const CheckpointIndex& index = *ck.index;
  auto shard_of = [&](const TensorRecord& t) -> const std::string& { return ck.files[t.file].name; };
  std::unordered_map<std::string, std::string> home;
  for (const auto& t : ck.tensors) {
    const auto [it, fresh] = home.emplace(t.name, shard_of(t));
    if (!fresh)
      raise(ErrorCode::kIndexDuplicateName,
            fmt::format("{}: tensor '{}' is in both '{}' and '{}'", source, t.name, it->second, shard_of(t)));
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
  std::set<std::pair<std::size_t, std::string>> storages;
  for (const auto& t : ck.tensors) {
    if (!listed.count(t.name))
      raise(ErrorCode::kIndexTensorNotListed,
            fmt::format("{}: shard '{}' holds tensor '{}', which weight_map does not list", source,
                        shard_of(t), t.name));
    if (storages.emplace(t.file, t.storage_key).second) total += t.nbytes;
  }
  if (index.total_size && *index.total_size != total)
    raise(ErrorCode::kIndexTotalSizeMismatch,
          fmt::format("{}: metadata.total_size is {}, the shards' tensors (each storage once) add up "
                      "to {} bytes", source, *index.total_size, total));
}

bool is_bin_path(const std::string& path) {
  return ends_with(path, ".bin") || ends_with(path, ".bin.index.json");
}

Checkpoint read_bin(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  if (!fs::exists(p, ec)) throw Failure{FailureKind::kFile, fmt::format("{}: no such file or folder", path)};
  Checkpoint ck;
  ck.format = Format::kPytorchBin;
  ck.path = path;
  if (!ends_with(path, ".json")) {
    read_bin_file(ck, path);
    return ck;
  }
  ck.index = value_or_raise(parse_index(io::read_file(path), path));
  ck.index_name = p.filename().string();
  for (const auto& shard : ck.index->shards) {
    const fs::path shard_path = p.parent_path() / shard;
    if (!fs::is_regular_file(shard_path, ec))
      throw Failure{FailureKind::kFile, fmt::format("{}: shard '{}' listed in the index is missing ({})",
                                                    path, shard, shard_path.string())};
    read_bin_file(ck, shard_path.string());
  }
  check_bin_index(ck, path);
  return ck;
}

}  // namespace memfit::checkpoint
