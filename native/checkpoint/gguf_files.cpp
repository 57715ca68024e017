#include "gguf_files.h"

#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "failure.h"
#include "file_reader.h"

namespace memfit::checkpoint {
namespace {

using hub::hub_read;

// The names of every split of the model `file` belongs to (itself alone when it is not a split).
std::vector<std::string> split_names(const std::string& file) {
  const SplitName s = split_name(file);
  if (s.count == 0) return {file};
  std::vector<std::string> out;
  for (int i = 1; i <= s.count; ++i) out.push_back(split_file_name(s.prefix, i, s.count));
  return out;
}

GgufModel model_of(const std::vector<gguf::File>& files, const std::vector<std::string>& names) {
  return value_or_raise(gguf_model(files, names));
}

}  // namespace

bool is_gguf_name(std::string_view name) {
  return name.size() > 5 && name.substr(name.size() - 5) == ".gguf";
}

gguf::File read_gguf_file(const std::string& path) {
  auto reader = std::make_shared<io::FileReader>(path);
  return value_or_raise(gguf::parse(io::file_byte_source(reader)));
}

GgufModel open_gguf_model(const std::string& path) {
  std::vector<gguf::File> files;
  std::vector<std::string> names = split_names(path);
  for (const auto& n : names) {
    std::error_code ec;
    if (names.size() > 1 && !std::filesystem::exists(n, ec))
      throw Failure{FailureKind::kFile, fmt::format("{}: a split of {} files; {} is missing", path, names.size(), n)};
    files.push_back(read_gguf_file(n));
  }
  return model_of(files, names);
}

std::optional<std::pair<std::string, std::string>> split_hub_target(const std::string& target) {
  const auto colon = target.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == target.size()) return std::nullopt;
  return std::make_pair(target.substr(0, colon), target.substr(colon + 1));
}

std::vector<HubFile> list_hub_gguf(hub::HubClient& client, const std::string& repo) {
  const std::string text = hub_read([&] { return client.fetch_model_files(repo); });
  nlohmann::json info = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!info.is_object() || !info.contains("siblings") || !info["siblings"].is_array())
    throw Failure{FailureKind::kNetwork, fmt::format("api/models/{}: no list of files (siblings) in the answer", repo)};
  std::vector<HubFile> out;
  for (const auto& s : info["siblings"]) {
    if (!s.is_object() || !s.contains("rfilename") || !s["rfilename"].is_string()) continue;
    HubFile f{s["rfilename"].get<std::string>(), std::nullopt};
    if (!is_gguf_name(f.name)) continue;
    if (s.contains("size") && s["size"].is_number_unsigned()) f.size = s["size"].get<std::uint64_t>();
    out.push_back(std::move(f));
  }
  return out;
}

gguf::File read_hub_gguf(hub::HubClient& client, const std::string& repo, const std::string& file) {
  constexpr std::uint64_t kFirst = 64 * 1024;
  const std::string source = repo + "/" + file;
  hub::HubClient::Range first = hub_read([&] { return client.fetch_range(repo, file, 0, kFirst - 1); });
  // A file shorter than the range comes back whole; its size is then the body's.
  const std::uint64_t size = first.total.value_or(first.body.size());
  zip::ByteSource s;
  s.name = source;
  s.size = size;
  s.read = [&](std::uint64_t offset, std::uint64_t length) -> Result<std::string> {
    if (offset + length <= first.body.size()) return first.body.substr(offset, length);
    return hub_read([&] { return client.fetch_range(repo, file, offset, offset + length - 1).body; });
  };
  return value_or_raise(gguf::parse(s));
}

GgufModel open_hub_gguf_model(hub::HubClient& client, const std::string& repo, const std::string& file) {
  std::vector<gguf::File> files;
  const std::vector<std::string> names = split_names(file);
  std::vector<std::string> sources;
  for (const auto& n : names) {
    files.push_back(read_hub_gguf(client, repo, n));
    sources.push_back(repo + "/" + n);
  }
  return model_of(files, sources);
}

}  // namespace memfit::checkpoint
