#include "process_memory.h"

#include <fstream>
#include <sstream>
#include <string>

namespace memfit::torchrt {
namespace {

// "VmHWM:   123456 kB" → bytes.
std::uint64_t field_kib(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    std::istringstream s(line.substr(key.size()));
    std::uint64_t kib = 0;
    s >> kib;
    return kib * 1024;
  }
  return 0;
}

}  // namespace

ProcessMemory read_process_memory() {
  return {field_kib("/proc/self/status", "VmRSS:"), field_kib("/proc/self/status", "VmHWM:")};
}

bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  return static_cast<bool>(out.flush());
}

std::uint64_t available_system_memory() { return field_kib("/proc/meminfo", "MemAvailable:"); }

}  // namespace memfit::torchrt
