#include "hub_bin_checkpoint.h"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "exit_codes.h"
#include "hub_range_file.h"
#include "memfit/format/torch_bin.h"
#include "model_source.h"

namespace memfit::cli {
namespace {

constexpr const char* kBinIndexName = "pytorch_model.bin.index.json";
constexpr const char* kBinName = "pytorch_model.bin";
// The zip reader first reads the End Of Central Directory (22 bytes) and the ZIP64 locator before
// it (20); a ZIP64 archive (over 4 GiB) has its 56-byte record right before that. Any real
// torch.save directory is longer than the 76 bytes before the end record, so no weight is in it.
constexpr std::uint64_t kTail = 22 + 20 + 56;
// data.pkl is read whole up to torch_bin::kMaxPickleSize; its extent adds a local header (30 +
// name + padding). A longer extent is not prefetched: the parser then reads exact ranges, and
// refuses an oversized pickle before reading it.
constexpr std::uint64_t kMaxPrefetch = torch_bin::kMaxPickleSize + 2 * 65536 + 30;

// The metadata entries' extents (local header, data, padding — up to the next entry), adjacent
// ones merged: data.pkl and torch 2's byteorder sit side by side before the first storage.
std::vector<std::pair<std::uint64_t, std::uint64_t>> metadata_extents(const zip::Archive& dir) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  const Result<std::vector<std::string>> names = torch_bin::metadata_entries(dir);
  if (!names) return out;  // read_metadata reports the same error, by name
  for (const auto& name : *names)
    if (const zip::Entry* e = dir.find(name)) out.push_back(zip::entry_extent(dir, *e));
  std::sort(out.begin(), out.end());
  std::vector<std::pair<std::uint64_t, std::uint64_t>> merged;
  for (const auto& x : out) {
    if (!merged.empty() && merged.back().second == x.first) merged.back().second = x.second;
    else merged.push_back(x);
  }
  return merged;
}

template <typename T>
T value_or_raise(Result<T> r, const HubRangeFile& remote) {
  if (r) return std::move(r).value();
  remote.rethrow_hub_error();
  throw CliError{exit_code_for(r.error().code()), r.error().message()};
}

// One .bin file of the repo, its tail already fetched: its tensors without file offsets.
std::vector<BinTensor> read_bin_tensors(HubRangeFile& remote, const std::string& file) {
  const zip::ByteSource src = remote.source();
  const zip::Archive dir = value_or_raise(zip::read_directory(src), remote);
  for (const auto& [first, end] : metadata_extents(dir))
    if (end - first <= kMaxPrefetch) remote.prefetch(first, end);
  const torch_bin::Checkpoint ck = value_or_raise(torch_bin::read_metadata(src), remote);
  std::vector<BinTensor> out;
  out.reserve(ck.tensors.size());
  for (const auto& t : ck.tensors) {
    BinTensor b;
    static_cast<torch_bin::Tensor&>(b) = t;
    b.file = remote.name();
    b.shard = file;
    out.push_back(std::move(b));
  }
  return out;
}

std::vector<BinTensor> read_hub_bin_file(hub::HubClient& client, const std::string& repo,
                                         const std::string& file) {
  HubRangeFile remote(client, repo, file, kTail);
  return read_bin_tensors(remote, file);
}

BinCheckpoint read_sharded(hub::HubClient& client, const std::string& repo,
                           const std::string& index_text) {
  const std::string source = repo + "/" + kBinIndexName;
  BinCheckpoint ck;
  Result<CheckpointIndex> index = parse_index(index_text, source);
  if (!index) throw CliError{exit_code_for(index.error().code()), index.error().message()};
  ck.index = std::move(index).value();
  ck.index_name = kBinIndexName;
  for (const auto& shard : ck.index->shards) {
    auto tensors = read_hub_bin_file(client, repo, shard);
    ck.files.push_back(repo + "/" + shard);
    ck.tensors.insert(ck.tensors.end(), std::make_move_iterator(tensors.begin()),
                      std::make_move_iterator(tensors.end()));
  }
  check_bin_index(*ck.index, ck.tensors, source);
  return ck;
}

}  // namespace

std::optional<BinCheckpoint> read_hub_bin_checkpoint(hub::HubClient& client, const std::string& repo) {
  try {
    if (auto index_text = hub::unless_missing([&] { return client.fetch_file(repo, kBinIndexName); }))
      return read_sharded(client, repo, *index_text);
    auto remote = hub::unless_missing(
        [&] { return std::make_unique<HubRangeFile>(client, repo, kBinName, kTail); });
    if (!remote) return std::nullopt;
    BinCheckpoint ck;
    ck.tensors = read_bin_tensors(**remote, kBinName);
    ck.files.push_back((*remote)->name());
    return ck;
  } catch (const hub::HubError& e) {
    throw CliError{e.exit_code(), e.message};
  }
}

}  // namespace memfit::cli
