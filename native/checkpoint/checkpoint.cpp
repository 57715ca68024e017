#include "checkpoint.h"

#include <string>
#include <unordered_map>

#include <fmt/format.h>

namespace memfit::checkpoint {

const char* format_name(Format format) {
  return format == Format::kPytorchBin ? "pytorch_bin" : "safetensors";
}

const char* format_description(Format format) {
  return format == Format::kPytorchBin ? "PyTorch .bin checkpoint (pickled state dict, exact)"
                                       : "safetensors headers (exact)";
}

std::vector<CheckpointTensor> Checkpoint::tree_tensors() const {
  std::vector<CheckpointTensor> out;
  out.reserve(tensors.size());
  for (const auto& t : tensors) out.push_back({t.name, t.dtype, t.shape, files[t.file].name});
  return out;
}

std::vector<CheckpointTensor> Checkpoint::untied_tree_tensors() const {
  const std::vector<std::size_t> alias = alias_targets(tensors);
  std::vector<CheckpointTensor> out;
  out.reserve(tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i)
    if (alias[i] == std::string::npos)
      out.push_back({tensors[i].name, tensors[i].dtype, tensors[i].shape, files[tensors[i].file].name});
  return out;
}

std::uint64_t Checkpoint::total_bytes() const {
  std::uint64_t n = 0;
  for (const auto& t : tensors) n += t.nbytes;
  return n;
}

std::vector<std::size_t> alias_targets(const std::vector<TensorRecord>& tensors) {
  std::vector<std::size_t> out(tensors.size(), std::string::npos);
  std::unordered_map<std::string, std::size_t> first;  // view key → first record
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const TensorRecord& t = tensors[i];
    if (t.storage_key.empty()) continue;
    const std::string key = fmt::format("{}|{}@{}:{}:{}:{}", t.file, t.storage_key, t.storage_offset,
                                        fmt::join(t.shape, ","), fmt::join(t.stride, ","),
                                        static_cast<int>(t.dtype));
    const auto [it, fresh] = first.emplace(key, i);
    if (!fresh) out[i] = it->second;
  }
  return out;
}

}  // namespace memfit::checkpoint
