#include "checkpoint_reader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "exit_codes.h"
#include "model_source.h"

namespace memfit::cli {
namespace fs = std::filesystem;
namespace {

constexpr std::uint64_t kFirstRange = 64 * 1024;  // most headers fit: one request
constexpr const char* kIndexName = "model.safetensors.index.json";

[[noreturn]] void raise(const Error& e) { throw CliError{exit_code_for(e.code()), e.message()}; }

template <typename T>
T value_or_raise(Result<T> r) {
  if (!r) raise(r.error());
  return std::move(r).value();
}

safetensors::Header read_local_header(const std::string& path) {
  std::error_code ec;
  const std::uint64_t size = fs::file_size(path, ec);
  if (ec) throw CliError{kExitFile, fmt::format("{}: cannot read ({})", path, ec.message())};
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CliError{kExitFile, fmt::format("{}: cannot open file", path)};
  std::string first(8, '\0');
  in.read(first.data(), 8);
  first.resize(static_cast<std::size_t>(in.gcount()));
  const std::uint64_t n = value_or_raise(safetensors::read_header_size(first, path));
  if (8 + n > size)
    raise(Error(ErrorCode::kSafetensorsHeaderTruncated,
                fmt::format("{}: the header length says {} bytes, the file has {} after the "
                            "length", path, n, size - std::min<std::uint64_t>(size, 8))));
  std::string header(static_cast<std::size_t>(n), '\0');
  if (n > 0) {
    in.read(header.data(), 1);  // refuse a hostile header before reading all of it
    value_or_raise(safetensors::check_header_start(header.substr(0, 1), path));
    in.read(header.data() + 1, static_cast<std::streamsize>(n - 1));
  }
  if (static_cast<std::uint64_t>(in.gcount()) + 1 < n || !in)
    throw CliError{kExitFile, fmt::format("{}: read error in the header", path)};
  return value_or_raise(safetensors::parse_header(header, size, path));
}

Checkpoint read_sharded(const std::string& index_path,
                        const std::function<safetensors::Header(const std::string&)>& read_shard,
                        const std::string& index_text) {
  Checkpoint ck;
  ck.index_name = fs::path(index_path).filename().string();
  ck.index = value_or_raise(parse_index(index_text, index_path));
  for (const auto& shard : ck.index->shards) ck.files.emplace_back(shard, read_shard(shard));
  value_or_raise(check_index_against_shards(*ck.index, ck.files, index_path));
  return ck;
}

}  // namespace

bool has_local_checkpoint(const std::string& dir) {
  std::error_code ec;
  if (fs::is_regular_file(fs::path(dir) / kIndexName, ec)) return true;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".safetensors") return true;
  return false;
}

Checkpoint read_local_checkpoint(const std::string& path) {
  std::error_code ec;
  fs::path p(path);
  if (fs::is_directory(p, ec)) {
    if (fs::is_regular_file(p / kIndexName, ec)) p /= kIndexName;
    else {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(p, ec))
        if (e.path().extension() == ".safetensors") files.push_back(e.path());
      std::sort(files.begin(), files.end());
      if (files.empty())
        throw CliError{kExitFile, fmt::format("{}: no safetensors checkpoint in this folder", path)};
      Checkpoint ck;
      for (const auto& f : files) ck.files.emplace_back(f.filename().string(), read_local_header(f.string()));
      if (files.size() > 1)
        ck.warnings.push_back(fmt::format("{} safetensors files and no index: all of them are read",
                                          files.size()));
      return ck;
    }
  }
  if (p.extension() == ".json") {
    const fs::path dir = p.parent_path();
    return read_sharded(p.string(),
                        [&](const std::string& shard) {
                          return read_local_header((dir / shard).string());
                        },
                        read_file(p.string()));
  }
  Checkpoint ck;
  ck.files.emplace_back(p.filename().string(), read_local_header(p.string()));
  return ck;
}

namespace {

safetensors::Header read_hub_header(hub::HubClient& client, const std::string& repo,
                                    const std::string& file) {
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

}  // namespace

std::optional<Checkpoint> find_hub_checkpoint(hub::HubClient& client, const std::string& repo) {
  try {
    if (auto index_text = hub::unless_missing([&] { return client.fetch_file(repo, kIndexName); }))
      return read_sharded(repo + "/" + kIndexName,
                          [&](const std::string& shard) { return read_hub_header(client, repo, shard); },
                          *index_text);
    auto header = hub::unless_missing([&] { return read_hub_header(client, repo, "model.safetensors"); });
    if (!header) return std::nullopt;
    Checkpoint ck;
    ck.files.emplace_back("model.safetensors", std::move(*header));
    return ck;
  } catch (const hub::HubError& e) {
    throw CliError{e.exit_code(), e.message};
  }
}

Checkpoint read_hub_checkpoint(hub::HubClient& client, const std::string& repo) {
  if (std::optional<Checkpoint> ck = find_hub_checkpoint(client, repo)) return std::move(*ck);
  throw CliError{kExitEntryNotFound, fmt::format("model `{}` has no safetensors weights ({} or "
                                                 "model.safetensors)", repo, kIndexName)};
}

}  // namespace memfit::cli
