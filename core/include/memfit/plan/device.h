// memfit/plan/device.h — devices of a device map, and budgets (accelerate's max_memory).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "memfit/error.h"

namespace memfit::plan {

struct Device {
  enum class Kind : std::uint8_t { kGpu, kMps, kCpu, kDisk } kind = Kind::kCpu;
  int index = 0;  // GPU ordinal

  static Device gpu(int i) { return {Kind::kGpu, i}; }
  static Device cpu() { return {Kind::kCpu, 0}; }
  static Device disk() { return {Kind::kDisk, 0}; }
  bool is_gpu() const { return kind == Kind::kGpu; }
  std::string key() const;  // "0", "mps", "cpu", "disk" — as in max_memory / device maps
  bool operator==(const Device& o) const { return kind == o.kind && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

// Parses a device key: "0", "1", "mps", "cpu", "disk". "cuda:0" is refused with a hint.
Result<Device> parse_device(const std::string& key);

// accelerate's convert_file_size_to_int: "24GiB" (2^30), "24GB" (10^9), "5Gb" (bits: ÷8),
// KiB/MiB/KB/MB likewise, fractional values ("1.5GiB") allowed. memfit extensions (documented):
// "TiB"/"TB", a plain number of bytes ("1000000"), surrounding spaces.
Result<std::uint64_t> parse_size(const std::string& text);

// A device → bytes budget, in accelerate's order: GPUs ascending, then mps, cpu, disk.
using MaxMemory = std::vector<std::pair<Device, std::uint64_t>>;

// "0=24GiB,1=24GiB,cpu=64GiB" (also ':' as separator) → sorted budgets; errors name the entry.
Result<MaxMemory> parse_max_memory(const std::string& spec);
// Sorts into accelerate's device order and rejects duplicates.
Result<MaxMemory> normalize_max_memory(std::vector<std::pair<Device, std::uint64_t>> entries);

}  // namespace memfit::plan
