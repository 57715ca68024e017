#include "gguf_files.h"

#include <filesystem>
#include <memory>

#include <fmt/format.h>

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

// A Hub file as a byte source: its first 64 KiB at once (most headers end there, and the answer
// gives the file's size), the rest by Range as the parser asks.
zip::ByteSource hub_source(hub::HubClient& client, const std::string& repo, const std::string& file) {
  constexpr std::uint64_t kFirst = 64 * 1024;
  auto first = std::make_shared<hub::HubClient::Range>(
      hub_read([&] { return client.fetch_range(repo, file, 0, kFirst - 1); }));
  zip::ByteSource s;
  s.name = repo + "/" + file;
  s.size = first->total.value_or(first->body.size());  // a file shorter than the range comes back whole
  s.read = [&client, repo, file, first](std::uint64_t offset, std::uint64_t length) -> Result<std::string> {
    if (offset + length <= first->body.size()) return first->body.substr(offset, length);
    return hub_read([&] { return client.fetch_range(repo, file, offset, offset + length - 1).body; });
  };
  return s;
}

// `source`, keeping every byte it hands out from offset 0 on in `kept` (the parser reads the
// header front to back).
zip::ByteSource recording(zip::ByteSource source, std::shared_ptr<std::string> kept) {
  auto inner = std::move(source.read);
  source.read = [inner, kept](std::uint64_t offset, std::uint64_t length) -> Result<std::string> {
    if (offset > kept->size()) return inner(offset, length);
    if (offset + length > kept->size()) {
      Result<std::string> more = inner(kept->size(), offset + length - kept->size());
      if (!more) return more;
      kept->append(*more);
    }
    return kept->substr(offset, std::min<std::uint64_t>(length, kept->size() - offset));
  };
  return source;
}

GgufHeaderBytes header_bytes(zip::ByteSource source) {
  auto kept = std::make_shared<std::string>();
  const zip::ByteSource s = recording(std::move(source), kept);
  const gguf::File f = value_or_raise(gguf::parse(s));
  kept->resize(std::min<std::uint64_t>(kept->size(), f.header_size));
  return {std::move(*kept), f.file_size};
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

gguf::File read_hub_gguf(hub::HubClient& client, const std::string& repo, const std::string& file) {
  return value_or_raise(gguf::parse(hub_source(client, repo, file)));
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

GgufHeaderBytes read_gguf_header_bytes(const std::string& path) {
  return header_bytes(io::file_byte_source(std::make_shared<io::FileReader>(path)));
}

GgufHeaderBytes read_hub_gguf_header_bytes(hub::HubClient& client, const std::string& repo, const std::string& file) {
  return header_bytes(hub_source(client, repo, file));
}

}  // namespace memfit::checkpoint
