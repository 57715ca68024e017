// get_balanced_memory, as accelerate computes it.
#include <algorithm>
#include <cmath>
#include <set>
#include <map>

#include "memfit/plan/infer_device_map.h"

namespace memfit::plan {

ModuleSizes planner_sizes(const TensorTree& tree, const AccelerateOptions& opt) {
  SizeOptions so;
  so.include_legacy_buffers = opt.include_legacy_buffers;
  so.bool_as_bit = true;
  so.dtype = opt.dtype;
  so.special_dtypes = opt.special_dtypes;
  return compute_module_sizes(tree, so);
}

namespace {

// get_module_leaves: keys (but "") of which no other key is a direct child.
std::vector<std::string> module_leaves(const std::vector<std::string>& keys) {
  std::map<std::string, int> children;
  for (const auto& k : keys) {
    if (k.empty()) continue;
    const auto dot = k.rfind('.');
    if (dot == std::string::npos) continue;
    ++children[k.substr(0, dot)];
  }
  std::vector<std::string> leaves;
  for (const auto& k : keys)
    if (!k.empty() && !children.count(k)) leaves.push_back(k);
  return leaves;
}

// min(want, limit) as an integer: compared in doubles, but a budget near 2^64 (which a double
// rounds up past uint64's range) is never converted back.
std::uint64_t clamp_to(double want, std::uint64_t limit) {
  return want < static_cast<double>(limit) ? static_cast<std::uint64_t>(want) : limit;
}

}  // namespace

MaxMemory get_balanced_memory(const TensorTree& tree, const MaxMemory& max_memory_in,
                              const AccelerateOptions& opt, bool low_zero) {
  MaxMemory max_memory = max_memory_in;
  std::vector<std::size_t> gpus;  // positions in max_memory of GPUs with a budget, ascending
  for (std::size_t i = 0; i < max_memory.size(); ++i)
    if (max_memory[i].first.is_gpu() && max_memory[i].second > 0) gpus.push_back(i);
  const std::size_t num_devices = gpus.size();
  if (num_devices == 0) return max_memory;
  if (num_devices == 1) low_zero = false;  // budgets were given: no 90% rule

  const ModuleSizes sizes = planner_sizes(tree, opt);
  // Sizes are bit counts (bool = 1 bit). accelerate divides Python ints, or floats once a bool
  // makes a size fractional; a double holds every size below 2^53 bits (1 PB) exactly, so this
  // is the same arithmetic (long double would only add WASM soft-float code).
  const double total = static_cast<double>(sizes.total()) / 8;
  double per_gpu = std::floor(total / static_cast<double>(low_zero ? num_devices - 1 : num_devices));

  // Buffer: the first instance of each no-split class (in module_sizes order), or the mean
  // size of the final modules, whichever is larger, × 1.25.
  const std::vector<std::string> no_split = opt.no_split ? *opt.no_split : tree.no_split_classes;
  double buffer = 0;
  if (!no_split.empty()) {
    std::set<std::string> found;
    for (const TreeItem& item : sizes.order) {
      if (item.is_tensor || item.index == 0) continue;  // a tensor is never a no-split class
      const std::string& cls = tree.modules[item.index].class_name;
      if (std::find(no_split.begin(), no_split.end(), cls) != no_split.end() && found.insert(cls).second)
        buffer = std::max(buffer, static_cast<double>(sizes.at(item)) / 8);
      if (found.size() == std::set<std::string>(no_split.begin(), no_split.end()).size()) break;
    }
  }
  std::vector<std::string> keys;
  keys.reserve(sizes.order.size());
  for (const TreeItem& item : sizes.order) keys.push_back(item.name(tree));
  const std::vector<std::string> first = module_leaves(keys);
  const std::set<std::string> first_set(first.begin(), first.end());
  keys.erase(std::remove_if(keys.begin(), keys.end(), [&](const std::string& k) { return first_set.count(k) > 0; }),
             keys.end());
  const std::vector<std::string> leaves = module_leaves(keys);
  double leaf_sum = 0;
  for (const auto& l : leaves) leaf_sum += static_cast<double>(sizes.at(tree, l)) / 8;
  const double mean_leaves = std::trunc(leaf_sum / static_cast<double>(std::max<std::size_t>(leaves.size(), 1)));
  buffer = std::trunc(1.25 * std::max(buffer, mean_leaves));
  per_gpu += buffer;

  auto budget = [&](std::size_t pos) -> double { return static_cast<double>(max_memory[pos].second); };
  // Every GPU but the last gets min(per_gpu, its budget); the last keeps its whole budget.
  for (std::size_t g = 0; g + 1 < gpus.size(); ++g) {
    const std::size_t pos = gpus[g];
    const bool is_zero = max_memory[pos].first.index == 0;
    const double want = (low_zero && is_zero) ? budget(pos) : per_gpu;
    max_memory[pos].second = clamp_to(want, max_memory[pos].second);
  }
  if (low_zero) {
    // accelerate sums max_memory[i] for i in range(1, num_devices): GPU ordinals 1..n-1.
    double others = 0;
    for (std::size_t i = 0; i < max_memory.size(); ++i) {
      const Device& d = max_memory[i].first;
      if (d.is_gpu() && d.index >= 1 && static_cast<std::size_t>(d.index) < num_devices) others += budget(i);
    }
    for (auto& [d, b] : max_memory)
      if (d.is_gpu() && d.index == 0)
        b = clamp_to(std::max(0.0, total - others), b);
  }
  return max_memory;
}

}  // namespace memfit::plan
