// memfit/memory/gpu_catalog.h — common accelerators (memory, memory bandwidth, dense 16-bit tensor
// throughput, from the vendors' datasheets) and memory-size strings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memfit {

struct GpuSpec {
  std::string_view name;            // "NVIDIA RTX 4090"
  std::vector<std::string_view> aliases;  // normalized extra names ("4090", "rtx4090")
  double memory_bytes = 0;          // nominal (the driver reports a little less)
  double bandwidth_bytes_s = 0;     // memory bandwidth, bytes/s
  double bf16_flops = 0;            // dense bf16 tensor FLOP/s (fp16 where there is no bf16)
  bool bf16 = true;                 // false: T4 / V100 (fp16 figure)
};

const std::vector<GpuSpec>& gpu_catalog();
// Case-, space- and punctuation-insensitive ("rtx 4090", "RTX4090", "nvidia-h100-sxm"); a unique
// partial match is accepted. Throws Error(kInvalidArgument) listing the candidates otherwise.
const GpuSpec& find_gpu(std::string_view name);

// "24GiB" / "24GB" / "500MiB" / "1.5TB" / "25769803776" → bytes, by plan::parse_size (the one size
// parser: accelerate's convert_file_size_to_int — GiB = 2^30, GB = 10^9, a trailing lowercase "b"
// means bits). Throws Error(kInvalidArgument) naming `what` when the string is not a size.
double parse_memory_size(std::string_view text, std::string_view what);

}  // namespace memfit
