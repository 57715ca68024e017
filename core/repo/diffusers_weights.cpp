// Which files hold a component's weights. Names follow diffusers (utils/constants.py and
// hub_utils._add_variant): diffusers models save diffusion_pytorch_model[.VARIANT].safetensors,
// transformers models model[.VARIANT].safetensors; a sharded save writes
// NAME.safetensors.index[.VARIANT].json (older diffusers: NAME.safetensors.VARIANT.index.json)
// naming its shards. Only the index is read to find the shards: shard names vary by version.
#include <algorithm>

#include <fmt/format.h>

#include "diffusers_parts.h"
#include "kinds.h"
#include "memfit/error.h"
#include "memfit/format/checkpoint_index.h"

namespace memfit::repo::diffusers {
namespace {

constexpr const char* kSafePrefixes[] = {"diffusion_pytorch_model", "model"};
constexpr const char* kBinPrefixes[] = {"diffusion_pytorch_model", "pytorch_model"};

bool starts_with(std::string_view s, std::string_view head) { return s.substr(0, head.size()) == head; }
bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// "-00001-of-00002" (transformers' shard suffix) somewhere in a name part.
bool has_shard_suffix(std::string_view s) { return s.find("-of-") != std::string_view::npos; }

struct Candidate {
  std::string path;
  std::string variant;
  bool sharded = false;
};

// Reads one file name of the folder as a safetensors weights file or index, or nothing.
std::optional<Candidate> classify(const std::string& path, std::string_view base) {
  for (const char* p : kSafePrefixes) {
    const std::string head = std::string(p) + ".";
    if (!starts_with(base, head)) continue;
    const std::string_view rest = base.substr(head.size());
    if (rest == "safetensors") return Candidate{path, "", false};
    if (rest == "safetensors.index.json") return Candidate{path, "", true};
    constexpr std::string_view kIndexHead = "safetensors.index.", kIndexTail = ".json";
    if (starts_with(rest, kIndexHead) && ends_with(rest, kIndexTail) &&
        rest.size() > kIndexHead.size() + kIndexTail.size()) {
      const auto v = rest.substr(kIndexHead.size(), rest.size() - kIndexHead.size() - kIndexTail.size());
      if (v.find('.') == std::string_view::npos) return Candidate{path, std::string(v), true};
    }
    constexpr std::string_view kLegacyHead = "safetensors.", kLegacyTail = ".index.json";
    if (starts_with(rest, kLegacyHead) && ends_with(rest, kLegacyTail) &&
        rest.size() > kLegacyHead.size() + kLegacyTail.size()) {
      const auto v = rest.substr(kLegacyHead.size(), rest.size() - kLegacyHead.size() - kLegacyTail.size());
      if (v.find('.') == std::string_view::npos) return Candidate{path, std::string(v), true};
    }
    constexpr std::string_view kTail = ".safetensors";
    if (ends_with(rest, kTail) && rest.size() > kTail.size()) {
      const auto v = rest.substr(0, rest.size() - kTail.size());
      if (v.find('.') == std::string_view::npos && !has_shard_suffix(v))
        return Candidate{path, std::string(v), false};
    }
  }
  return std::nullopt;
}

// fp16 first (the variant most pipelines publish), then bf16, then by name.
int variant_rank(const std::string& v) {
  if (v.empty()) return 0;
  if (v == "fp16") return 1;
  if (v == "bf16") return 2;
  return 3;
}

}  // namespace

WeightsChoice choose_weights(const RepoFiles& files, const std::string& folder) {
  const std::string head = folder + "/";
  std::vector<Candidate> found;
  std::vector<std::string> bins, plain_bins;
  for (const std::string& path : files.listing) {
    if (!starts_with(path, head)) continue;
    const std::string_view base = std::string_view(path).substr(head.size());
    if (base.find('/') != std::string_view::npos) continue;  // diffusers reads folder/file only
    if (auto c = classify(path, base)) {
      found.push_back(*c);
      continue;
    }
    for (const char* p : kBinPrefixes) {
      if (!starts_with(base, p) || !(ends_with(base, ".bin"))) continue;
      bins.push_back(path);
      const std::string_view mid = base.substr(std::string_view(p).size(), base.size() - std::string_view(p).size() - 4);
      if (mid.empty() || (mid[0] == '-' && mid.find('.') == std::string_view::npos)) plain_bins.push_back(path);
      break;
    }
  }
  WeightsChoice w;
  if (!found.empty()) {
    // Non-variant before variant; a single file before an index; then the variant's rank, name.
    const auto best = std::min_element(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
      const int ra = variant_rank(a.variant), rb = variant_rank(b.variant);
      if (ra != rb) return ra < rb;
      if (a.variant != b.variant) return a.variant < b.variant;
      if (a.sharded != b.sharded) return !a.sharded;
      return a.path < b.path;
    });
    w.form = best->sharded ? WeightsChoice::Form::kShardedSafetensors : WeightsChoice::Form::kSafetensors;
    w.file = best->path;
    w.variant = best->variant;
    return w;
  }
  if (!bins.empty()) {
    w.form = WeightsChoice::Form::kOtherFormat;
    w.other_files = plain_bins.empty() ? bins : plain_bins;
  }
  return w;
}

}  // namespace memfit::repo::diffusers
