#include "memfit/plan/device_map.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace memfit::plan {
namespace {

void clean(DeviceMap& map, const std::string& module_name) {
  // accelerate matches with startswith(prefix) where prefix = module_name + "."
  const std::string prefix = module_name.empty() ? "" : module_name + ".";
  auto starts = [&](const std::string& k) { return k.compare(0, prefix.size(), prefix) == 0; };
  std::vector<Device> values;
  for (const auto& [k, v] : map)
    if (starts(k)) values.push_back(v);
  const bool one_device =
      !values.empty() && std::all_of(values.begin(), values.end(), [&](const Device& d) { return d == values[0]; });
  if (one_device && values.size() > 1) {
    const Device d = values[0];
    map.erase(std::remove_if(map.begin(), map.end(), [&](const auto& kv) { return starts(kv.first); }),
              map.end());
    map.emplace_back(module_name, d);
  }
  // Children: the next name component of every longer key under the prefix (a set: sorted).
  const std::size_t depth =
      module_name.empty() ? 1 : static_cast<std::size_t>(std::count(module_name.begin(), module_name.end(), '.')) + 2;
  std::set<std::string> children;
  for (const auto& [k, v] : map) {
    if (!starts(k) || k.size() <= module_name.size()) continue;
    // ".".join(k.split(".")[:depth])
    std::size_t pos = std::string::npos, from = 0;
    for (std::size_t i = 0; i < depth; ++i) {
      pos = k.find('.', from);
      if (pos == std::string::npos) break;
      from = pos + 1;
    }
    children.insert(pos == std::string::npos ? k : k.substr(0, pos));
  }
  for (const auto& child : children) clean(map, child);
}

}  // namespace

bool covers(const std::string& key, const std::string& name) {
  return key.empty() || name == key ||
         (name.size() > key.size() && name.compare(0, key.size(), key) == 0 && name[key.size()] == '.');
}

DeviceMap clean_device_map(DeviceMap map) {
  clean(map, "");
  return map;
}

const Device* device_of(const DeviceMap& map, const std::string& tensor_name) {
  const Device* best = nullptr;
  std::size_t best_len = 0;
  for (const auto& [k, v] : map)
    if (covers(k, tensor_name) && (best == nullptr || k.size() >= best_len)) {
      best = &v;
      best_len = k.size();
    }
  return best;
}

Result<bool> check_device_map(const TensorTree& tree, const DeviceMap& map) {
  std::vector<std::string> unknown, uncovered, twice;
  std::set<std::string> keys;
  for (const auto& [k, v] : map) {
    if (!keys.insert(k).second) twice.push_back(k);
    if (!k.empty() && tree.find_module(k) < 0 && tree.find_tensor(k) < 0) unknown.push_back(k);
  }
  // A tensor is covered by its own name or by any module above it: O(depth) set lookups per
  // tensor, not a scan of every key (maps split down to tensors have thousands of keys).
  // Like accelerate, only what the state dict holds must be placed: a non-persistent buffer (a
  // rotary inv_freq) is computed by the model, never loaded.
  for (const auto& t : tree.tensors) {
    if (t.is_alias() || (t.kind == TensorKind::kBuffer && !t.persistent)) continue;
    bool covered = keys.count(t.name) > 0;
    for (int m = t.module; !covered && m >= 0; m = tree.modules[m].parent)
      covered = keys.count(tree.modules[m].name) > 0;
    if (!covered) uncovered.push_back(t.name);
  }
  if (unknown.empty() && uncovered.empty() && twice.empty()) return true;
  auto preview = [](const std::vector<std::string>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size() && i < 5; ++i) s += (i ? ", " : "") + ("'" + v[i] + "'");
    if (v.size() > 5) s += fmt::format(" (+{} more)", v.size() - 5);
    return s;
  };
  std::string msg = "device map:";
  if (!uncovered.empty())
    msg += fmt::format(" {} tensors are not placed: {};", uncovered.size(), preview(uncovered));
  if (!unknown.empty())
    msg += fmt::format(" {} keys name nothing in the model: {};", unknown.size(), preview(unknown));
  if (!twice.empty()) msg += fmt::format(" keys given twice: {};", preview(twice));
  msg.pop_back();
  return Error(ErrorCode::kInvalidArgument, msg);
}

}  // namespace memfit::plan
