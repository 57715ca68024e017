#include "memfit/plan/device.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "trim.h"

namespace memfit::plan {
namespace {

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// Python's float(): a full decimal (or exponent) number and nothing else.
bool parse_number(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(*out);
}

int rank(const Device& d) {
  switch (d.kind) {
    case Device::Kind::kGpu: return 0;
    case Device::Kind::kMps: return 1;
    case Device::Kind::kCpu: return 2;
    case Device::Kind::kDisk: return 3;
  }
  return 3;
}

}  // namespace

std::string Device::key() const {
  switch (kind) {
    case Kind::kGpu: return std::to_string(index);
    case Kind::kMps: return "mps";
    case Kind::kCpu: return "cpu";
    case Kind::kDisk: return "disk";
  }
  return "cpu";
}

Result<Device> parse_device(const std::string& raw) {
  const std::string key = trim(raw);
  if (key == "cpu") return Device::cpu();
  if (key == "disk") return Device::disk();
  if (key == "mps") return Device{Device::Kind::kMps, 0};
  if (!key.empty() && key.size() <= 4 && std::all_of(key.begin(), key.end(), ::isdigit))
    return Device::gpu(std::atoi(key.c_str()));
  std::string hint;
  if (key.rfind("cuda:", 0) == 0 || key.rfind("xpu:", 0) == 0 || key.rfind("npu:", 0) == 0)
    hint = fmt::format(" (write GPU {} as \"{}\")", key.substr(key.find(':') + 1), key.substr(key.find(':') + 1));
  else if (key == "cuda" || key == "gpu")
    hint = " (write GPUs by their index: 0, 1, …)";
  return Error(ErrorCode::kInvalidArgument,
               fmt::format("max_memory: device '{}' is not recognized; devices are GPU indices (0, 1, "
                           "…), 'mps', 'cpu' and 'disk'{}",
                           key, hint));
}

Result<std::uint64_t> parse_size(const std::string& raw) {
  const std::string text = trim(raw);
  const std::string up = upper(text);
  auto bad = [&]() {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("size '{}' is not valid: use bytes (an integer) or a number with a unit "
                             "(GiB, MiB, KiB, TiB: powers of 1024; GB, MB, KB, TB: powers of 1000; a "
                             "lowercase 'b' means bits, e.g. '5Gb')",
                             raw));
  };
  struct Unit { const char* suffix; double factor; bool bits_allowed; };
  static const Unit kUnits[] = {{"TIB", 1099511627776.0, false}, {"GIB", 1073741824.0, false},
                                {"MIB", 1048576.0, false},       {"KIB", 1024.0, false},
                                {"TB", 1e12, true},              {"GB", 1e9, true},
                                {"MB", 1e6, true},               {"KB", 1e3, true}};
  for (const Unit& u : kUnits) {
    const std::size_t n = std::char_traits<char>::length(u.suffix);
    if (up.size() < n || up.compare(up.size() - n, n, u.suffix) != 0) continue;
    double v = 0;
    if (!parse_number(trim(text.substr(0, text.size() - n)), &v) || v < 0) return bad();
    const double bytes = v * u.factor;
    if (bytes >= 1.8e19) return bad();
    // int() truncation as in accelerate; "Gb" (lowercase b) is bits.
    auto size = static_cast<std::uint64_t>(bytes);
    if (u.bits_allowed && text.back() == 'b') size /= 8;
    return size;
  }
  double v = 0;
  if (!text.empty() && std::all_of(text.begin(), text.end(), ::isdigit) && parse_number(text, &v) &&
      v < 1.8e19)
    return static_cast<std::uint64_t>(std::strtoull(text.c_str(), nullptr, 10));
  return bad();
}

Result<MaxMemory> normalize_max_memory(std::vector<std::pair<Device, std::uint64_t>> entries) {
  for (std::size_t i = 0; i < entries.size(); ++i)
    for (std::size_t j = i + 1; j < entries.size(); ++j)
      if (entries[i].first == entries[j].first)
        return Error(ErrorCode::kInvalidArgument,
                     fmt::format("max_memory: device '{}' is given twice", entries[i].first.key()));
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    if (rank(a.first) != rank(b.first)) return rank(a.first) < rank(b.first);
    return a.first.index < b.first.index;
  });
  return entries;
}

Result<MaxMemory> parse_max_memory(const std::string& spec) {
  std::vector<std::pair<Device, std::uint64_t>> entries;
  std::size_t start = 0;
  while (start <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', start), spec.size());
    const std::string item = trim(spec.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) {
      if (comma >= spec.size()) break;
      continue;
    }
    std::size_t eq = item.find('=');
    if (eq == std::string::npos) eq = item.rfind(':');
    if (eq == std::string::npos)
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("max_memory: '{}' is not DEVICE=SIZE (e.g. 0=24GiB,cpu=64GiB)", item));
    auto dev = parse_device(item.substr(0, eq));
    if (!dev) return dev.error();
    auto size = parse_size(item.substr(eq + 1));
    if (!size)
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("max_memory: device {}: {}", dev->key(), size.error().message()));
    entries.emplace_back(*dev, *size);
  }
  if (entries.empty())
    return Error(ErrorCode::kInvalidArgument, "max_memory: no budgets given (e.g. 0=24GiB,cpu=64GiB)");
  return normalize_max_memory(std::move(entries));
}

}  // namespace memfit::plan
