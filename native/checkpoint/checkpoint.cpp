#include "checkpoint_source.h"

#include <filesystem>

#include <fmt/format.h>

#include "bin_checkpoint.h"
#include "checkpoint_reader.h"
#include "exit_codes.h"
#include "model_source.h"

namespace memfit::torchrt {
namespace fs = std::filesystem;
using cli::CliError;

namespace {

std::vector<std::int64_t> contiguous_stride(const Shape& shape) {
  std::vector<std::int64_t> stride(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) stride[i - 1] = stride[i] * shape[i];
  return stride;
}

// The folder the checkpoint's file names are relative to.
fs::path base_dir(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return fs::path(path);
  fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

CheckpointSource from_safetensors(const std::string& path) {
  const cli::Checkpoint ck = cli::read_local_checkpoint(path);
  CheckpointSource src;
  src.format = CheckpointSource::Format::kSafetensors;
  src.path = path;
  src.warnings = ck.warnings;
  const fs::path dir = base_dir(path);
  for (const auto& [file, header] : ck.files) {
    const std::size_t index = src.files.size();
    src.files.push_back((dir / file).string());
    for (const auto& t : header.tensors) {
      WeightRecord r;
      r.name = t.name;
      r.dtype = t.dtype;
      r.shape = t.shape;
      r.stride = contiguous_stride(t.shape);
      r.file = index;
      r.data_offset = header.data_start() + t.begin;  // checked by the parser: inside the file
      r.span_bytes = t.nbytes();
      r.nbytes = t.nbytes();
      src.records.push_back(std::move(r));
    }
  }
  return src;
}

CheckpointSource from_bin(const std::string& path) {
  const cli::BinCheckpoint ck = cli::read_bin_checkpoint(path);
  CheckpointSource src;
  src.format = CheckpointSource::Format::kBin;
  src.path = path;
  src.warnings = ck.warnings;
  for (const auto& t : ck.tensors) {
    std::size_t index = 0;
    while (index < src.files.size() && src.files[index] != t.file) ++index;
    if (index == src.files.size()) src.files.push_back(t.file);
    WeightRecord r;
    r.name = t.name;
    r.dtype = t.dtype;
    r.shape = t.shape;
    r.stride = t.stride;
    r.file = index;
    r.data_offset = t.data_offset;
    r.span_bytes = t.span_bytes;
    r.nbytes = t.nbytes;
    r.storage_key = t.storage_key;
    src.records.push_back(std::move(r));
  }
  return src;
}

}  // namespace

std::vector<CheckpointTensor> CheckpointSource::tensors() const {
  std::vector<CheckpointTensor> out;
  out.reserve(records.size());
  for (const auto& r : records)
    out.push_back({r.name, r.dtype, r.shape, fs::path(files[r.file]).filename().string()});
  return out;
}

std::uint64_t CheckpointSource::total_bytes() const {
  std::uint64_t n = 0;
  for (const auto& r : records) n += r.nbytes;
  return n;
}

CheckpointSource open_checkpoint(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw CliError{cli::kExitFile, fmt::format("{}: no such file or folder", path)};
  if (fs::is_directory(path, ec)) {
    if (cli::has_local_checkpoint(path)) return from_safetensors(path);
    if (cli::has_local_bin_checkpoint(path)) return from_bin(path);
    throw CliError{cli::kExitFile,
                   fmt::format("{}: no checkpoint in this folder (no *.safetensors, "
                               "model.safetensors.index.json, *.bin or pytorch_model.bin.index.json)",
                               path)};
  }
  if (cli::is_bin_checkpoint_path(path)) return from_bin(path);
  return from_safetensors(path);
}

}  // namespace memfit::torchrt
