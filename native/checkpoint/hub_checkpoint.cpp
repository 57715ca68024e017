#include "hub_checkpoint.h"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "bin_checkpoint.h"
#include "failure.h"
#include "hub_range_file.h"
#include "memfit/format/torch_bin.h"
#include "safetensors_checkpoint.h"

namespace memfit::checkpoint {
namespace {

constexpr std::uint64_t kFirstRange = 64 * 1024;  // most safetensors headers fit: one request
// The zip reader first reads the End Of Central Directory (22 bytes) and the ZIP64 locator before
// it (20); a ZIP64 archive (over 4 GiB) has its 56-byte record right before that. Any real
// torch.save directory is longer than the 76 bytes before the end record, so no weight is in it.
constexpr std::uint64_t kTail = 22 + 20 + 56;
// data.pkl is read whole up to torch_bin::kMaxPickleSize; its extent adds a local header (30 +
// name + padding). A longer extent is not prefetched: the parser then reads exact ranges, and
// refuses an oversized pickle before reading it.
constexpr std::uint64_t kMaxPrefetch = torch_bin::kMaxPickleSize + 2 * 65536 + 30;

using hub::hub_read;

safetensors::Header read_hub_header(hub::HubClient& client, const std::string& repo, const std::string& file) {
  const std::string source = repo + "/" + file;
  hub::HubClient::Range first = client.fetch_range(repo, file, 0, kFirstRange - 1);
  const std::uint64_t n = value_or_raise(safetensors::read_header_size(first.body, source));
  if (first.total && 8 + n > *first.total)
    raise(Error(ErrorCode::kSafetensorsHeaderTruncated,
                fmt::format("{}: the header length says {} bytes, the file has {}", source, n,
                            *first.total)));
  std::string header = first.body.substr(8, std::min<std::uint64_t>(n, first.body.size() - 8));
  value_or_raise(safetensors::check_header_start(header.substr(0, 1), source));
  if (header.size() < n) {  // a big header: one more request for the rest
    hub::HubClient::Range rest = client.fetch_range(repo, file, 8 + header.size(), 8 + n - 1);
    header += rest.body;
  }
  if (header.size() != n)
    raise(Error(ErrorCode::kSafetensorsHeaderTruncated,
                fmt::format("{}: the header length says {} bytes, the server sent {}", source, n,
                            header.size())));
  return value_or_raise(safetensors::parse_header(header, first.total, source));
}

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

// A parser's error, or the HubError behind it (network, gated, …) so the exit code says what
// happened rather than "invalid input".
template <typename T>
T metadata_or_raise(Result<T> r, const hub::HubRangeFile& remote) {
  if (r) return std::move(r).value();
  remote.rethrow_hub_error();
  raise(r.error());
}

// One .bin file of the repo, its tail already fetched.
void add_hub_bin_file(Checkpoint& ck, hub::HubRangeFile& remote, const std::string& file) {
  const zip::ByteSource src = remote.source();
  const zip::Archive dir = metadata_or_raise(zip::read_directory(src), remote);
  for (const auto& [first, end] : metadata_extents(dir))
    if (end - first <= kMaxPrefetch) remote.prefetch(first, end);
  add_bin_file(ck, remote.name(), file, metadata_or_raise(torch_bin::read_metadata(src), remote));
}

}  // namespace

std::optional<Checkpoint> find_hub_safetensors(hub::HubClient& client, const std::string& repo) {
  return hub_read([&]() -> std::optional<Checkpoint> {
    if (auto index_text = hub::unless_missing([&] { return client.fetch_file(repo, kSafetensorsIndexName); })) {
      Checkpoint ck = read_sharded_safetensors(repo + "/" + kSafetensorsIndexName, *index_text,
                                               [&](const std::string& shard, std::string* path) {
                                                 *path = repo + "/" + shard;
                                                 return read_hub_header(client, repo, shard);
                                               });
      ck.path = repo;
      return ck;
    }
    auto header = hub::unless_missing([&] { return read_hub_header(client, repo, "model.safetensors"); });
    if (!header) return std::nullopt;
    Checkpoint ck;
    ck.path = repo;
    add_safetensors_file(ck, repo + "/model.safetensors", "model.safetensors", *header);
    return ck;
  });
}

std::optional<Checkpoint> find_hub_bin(hub::HubClient& client, const std::string& repo) {
  return hub_read([&]() -> std::optional<Checkpoint> {
    Checkpoint ck;
    ck.format = Format::kPytorchBin;
    ck.path = repo;
    if (auto index_text = hub::unless_missing([&] { return client.fetch_file(repo, kBinIndexName); })) {
      const std::string source = repo + "/" + kBinIndexName;
      ck.index = value_or_raise(parse_index(*index_text, source));
      ck.index_name = kBinIndexName;
      for (const auto& shard : ck.index->shards) {
        hub::HubRangeFile remote(client, repo, shard, kTail);
        add_hub_bin_file(ck, remote, shard);
      }
      check_bin_index(ck, source);
      return ck;
    }
    auto remote = hub::unless_missing([&] { return std::make_unique<hub::HubRangeFile>(client, repo, kBinName, kTail); });
    if (!remote) return std::nullopt;
    add_hub_bin_file(ck, **remote, kBinName);
    return ck;
  });
}

Checkpoint open_hub_checkpoint(hub::HubClient& client, const std::string& repo) {
  if (std::optional<Checkpoint> st = find_hub_safetensors(client, repo)) return std::move(*st);
  if (std::optional<Checkpoint> bin = find_hub_bin(client, repo)) return std::move(*bin);
  throw Failure{FailureKind::kEntryNotFound,
                fmt::format("model `{}` has no weights memfit can read (model.safetensors.index.json, "
                            "model.safetensors, pytorch_model.bin.index.json or pytorch_model.bin)",
                            repo)};
}

Checkpoint open_hub_safetensors(hub::HubClient& client, const std::string& repo) {
  if (std::optional<Checkpoint> ck = find_hub_safetensors(client, repo)) return std::move(*ck);
  throw Failure{FailureKind::kEntryNotFound, fmt::format("model `{}` has no safetensors weights ({} or "
                                                         "model.safetensors)", repo, kSafetensorsIndexName)};
}

}  // namespace memfit::checkpoint
