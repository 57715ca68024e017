#include "safetensors_checkpoint.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "failure.h"
#include "file_reader.h"

namespace memfit::checkpoint {
namespace fs = std::filesystem;
namespace {

std::vector<std::int64_t> contiguous_stride(const Shape& shape) {
  std::vector<std::int64_t> stride(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) stride[i - 1] = stride[i] * shape[i];
  return stride;
}

safetensors::Header read_local_header(const std::string& path) {
  std::error_code ec;
  const std::uint64_t size = fs::file_size(path, ec);
  if (ec) throw Failure{FailureKind::kFile, fmt::format("{}: cannot read ({})", path, ec.message())};
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Failure{FailureKind::kFile, fmt::format("{}: cannot open file", path)};
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
    throw Failure{FailureKind::kFile, fmt::format("{}: read error in the header", path)};
  return value_or_raise(safetensors::parse_header(header, size, path));
}

}  // namespace

void add_safetensors_file(Checkpoint& ck, std::string path, std::string name, const safetensors::Header& header) {
  const std::size_t file = ck.files.size();
  // C order, each tensor its own bytes; data offsets were checked by the parser: inside the file.
  for (const auto& t : header.tensors)
    ck.tensors.push_back({t.name, t.dtype, t.shape, contiguous_stride(t.shape), /*contiguous=*/true, file,
                          header.data_start() + t.begin, t.nbytes(), t.nbytes(), /*storage_key=*/{},
                          /*storage_offset=*/0});
  ck.files.push_back({std::move(path), std::move(name), header});
}

Checkpoint read_sharded_safetensors(const std::string& index_source, const std::string& index_text,
                                    const ShardHeaderReader& read_shard) {
  Checkpoint ck;
  ck.index_name = fs::path(index_source).filename().string();
  ck.index = value_or_raise(parse_index(index_text, index_source));
  std::vector<std::pair<std::string, safetensors::Header>> headers;
  for (const auto& shard : ck.index->shards) {
    std::string path;
    headers.emplace_back(shard, read_shard(shard, &path));
    add_safetensors_file(ck, std::move(path), shard, headers.back().second);
  }
  value_or_raise(check_index_against_shards(*ck.index, headers, index_source));
  return ck;
}

bool has_safetensors(const std::string& dir) {
  std::error_code ec;
  if (fs::is_regular_file(fs::path(dir) / kSafetensorsIndexName, ec)) return true;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".safetensors") return true;
  return false;
}

Checkpoint read_safetensors(const std::string& path) {
  std::error_code ec;
  fs::path p(path);
  if (fs::is_directory(p, ec)) {
    if (fs::is_regular_file(p / kSafetensorsIndexName, ec)) {
      p /= kSafetensorsIndexName;
    } else {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(p, ec))
        if (e.path().extension() == ".safetensors") files.push_back(e.path());
      std::sort(files.begin(), files.end());
      if (files.empty())
        throw Failure{FailureKind::kFile, fmt::format("{}: no safetensors checkpoint in this folder", path)};
      Checkpoint ck;
      ck.path = path;
      for (const auto& f : files)
        add_safetensors_file(ck, f.string(), f.filename().string(), read_local_header(f.string()));
      if (files.size() > 1)
        ck.warnings.push_back(fmt::format("{} safetensors files and no index: all of them are read",
                                          files.size()));
      return ck;
    }
  }
  Checkpoint ck;
  if (p.extension() == ".json") {
    const fs::path dir = p.parent_path();
    ck = read_sharded_safetensors(p.string(), io::read_file(p.string()),
                                  [&](const std::string& shard, std::string* shard_path) {
                                    *shard_path = (dir / shard).string();
                                    return read_local_header(*shard_path);
                                  });
  } else {
    add_safetensors_file(ck, p.string(), p.filename().string(), read_local_header(p.string()));
  }
  ck.path = path;
  return ck;
}

}  // namespace memfit::checkpoint
