// native/torch/process_memory.h — this process's memory as the kernel counts it (/proc/self/status),
// for the loader's "peak RSS ≈ largest tensor" claim, and what the machine has free.
#pragma once

#include <cstdint>

namespace memfit::torchrt {

struct ProcessMemory {
  std::uint64_t rss_bytes = 0;       // VmRSS
  std::uint64_t peak_rss_bytes = 0;  // VmHWM: the high-water mark since start (or the last reset)
};

ProcessMemory read_process_memory();
// Resets VmHWM to the current RSS (writes "5" to /proc/self/clear_refs); false if not allowed.
bool reset_peak_rss();
// MemAvailable from /proc/meminfo (0 when unknown).
std::uint64_t available_system_memory();

}  // namespace memfit::torchrt
