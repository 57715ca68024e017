#include "memfit/memory/gpu_catalog.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "memfit/error.h"
#include "memfit/option_error.h"
#include "memfit/plan/device.h"

namespace memfit {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kGBs = 1e9;
constexpr double kTflops = 1e12;

std::string normalize(std::string_view s) {
  std::string out;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view vendor : {"nvidia", "geforce", "amd", "instinct", "tesla"}) {
    const auto p = out.find(vendor);
    if (p != std::string::npos) out.erase(p, vendor.size());
  }
  return out;
}

}  // namespace

const std::vector<GpuSpec>& gpu_catalog() {
  // Datasheet figures: memory as marketed, bandwidth, dense (non-sparse) 16-bit tensor TFLOP/s.
  static const std::vector<GpuSpec> kCatalog = {
      {"NVIDIA RTX 3090", {"3090"}, 24 * kGiB, 936 * kGBs, 71 * kTflops, true},
      {"NVIDIA RTX 4080", {"4080"}, 16 * kGiB, 716.8 * kGBs, 97.5 * kTflops, true},
      {"NVIDIA RTX 4090", {"4090"}, 24 * kGiB, 1008 * kGBs, 165.2 * kTflops, true},
      {"NVIDIA RTX 5090", {"5090"}, 32 * kGiB, 1792 * kGBs, 209.5 * kTflops, true},
      {"NVIDIA RTX A6000", {"a6000"}, 48 * kGiB, 768 * kGBs, 154.8 * kTflops, true},
      {"NVIDIA T4", {"t4"}, 16 * kGiB, 320 * kGBs, 65 * kTflops, false},
      {"NVIDIA V100 32GB", {"v100"}, 32 * kGiB, 900 * kGBs, 125 * kTflops, false},
      {"NVIDIA A10", {"a10", "a10g"}, 24 * kGiB, 600 * kGBs, 125 * kTflops, true},
      {"NVIDIA L4", {"l4"}, 24 * kGiB, 300 * kGBs, 121 * kTflops, true},
      {"NVIDIA L40S", {"l40s"}, 48 * kGiB, 864 * kGBs, 362 * kTflops, true},
      {"NVIDIA A100 40GB", {"a10040gb", "a10040g"}, 40 * kGiB, 1555 * kGBs, 312 * kTflops, true},
      {"NVIDIA A100 80GB", {"a100", "a10080gb", "a10080g"}, 80 * kGiB, 2039 * kGBs, 312 * kTflops, true},
      {"NVIDIA H100 PCIe", {"h100pcie"}, 80 * kGiB, 2000 * kGBs, 756 * kTflops, true},
      {"NVIDIA H100 SXM", {"h100", "h100sxm", "h10080gb"}, 80 * kGiB, 3350 * kGBs, 989 * kTflops, true},
      {"NVIDIA H200", {"h200"}, 141 * kGiB, 4800 * kGBs, 989 * kTflops, true},
      {"NVIDIA B200", {"b200"}, 180 * kGiB, 8000 * kGBs, 2250 * kTflops, true},
      {"AMD Instinct MI250X", {"mi250x"}, 128 * kGiB, 3277 * kGBs, 383 * kTflops, true},
      {"AMD Instinct MI300X", {"mi300x"}, 192 * kGiB, 5300 * kGBs, 1307 * kTflops, true},
  };
  return kCatalog;
}

const GpuSpec& find_gpu(std::string_view name) {
  const std::string q = normalize(name);
  const auto& all = gpu_catalog();
  if (!q.empty()) {
    for (const auto& g : all) {
      if (normalize(g.name) == q) return g;
      for (auto a : g.aliases)
        if (a == q || "rtx" + std::string(a) == q) return g;
    }
    std::vector<const GpuSpec*> partial;
    for (const auto& g : all)
      if (normalize(g.name).find(q) != std::string::npos) partial.push_back(&g);
    if (partial.size() == 1) return *partial.front();
    if (partial.size() > 1) {
      std::string names;
      for (const auto* g : partial) names += (names.empty() ? "" : ", ") + std::string(g->name);
      throw option_error("gpu", fmt::format(" '{}' is ambiguous: {}", name, names));
    }
  }
  std::string names;
  for (const auto& g : all) names += (names.empty() ? "" : ", ") + std::string(g.name);
  throw OptionMessage()
      .option("gpu")
      .text(fmt::format(" '{}' is not in memfit's catalogue ({}); give ", name, names))
      .option("vram")
      .text(" instead")
      .error();
}

double parse_memory_size(std::string_view text, std::string_view what) {
  // One size syntax for every flag and request field: accelerate's convert_file_size_to_int.
  const Result<std::uint64_t> bytes = plan::parse_size(std::string(text));
  if (!bytes)
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("{}: '{}' is not a memory size (e.g. 24GiB, 24GB, 500MiB, or bytes)", what, text));
  return static_cast<double>(*bytes);
}

}  // namespace memfit
