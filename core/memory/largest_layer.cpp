#include "memfit/memory/largest_layer.h"

#include <algorithm>
#include <deque>

namespace memfit {

std::vector<TreeItem> member_items(const TensorTree& tree, int module, bool with_params,
                                   bool with_buffers) {
  const ModuleNode& m = tree.modules[module];
  std::vector<TreeItem> items;
  if (with_params)
    for (int p : m.params)
      if (!tree.tensors[p].is_alias()) items.push_back({true, p});
  for (int c : m.children) items.push_back({false, c});
  if (with_buffers)
    for (int b : m.buffers) items.push_back({true, b});
  return items;
}

std::vector<TreeItem> root_items(const TensorTree& tree) { return member_items(tree, 0, true, true); }

LargestLayer largest_layer_among(const TensorTree& tree, const ModuleSizes& sizes,
                                 const std::vector<TreeItem>& items,
                                 const std::vector<std::string>& no_split, LayerRule rule) {
  LargestLayer out;
  std::deque<TreeItem> queue(items.begin(), items.end());
  auto is_no_split = [&](const ModuleNode& m) {
    return std::find(no_split.begin(), no_split.end(), m.class_name) != no_split.end();
  };
  while (!queue.empty()) {
    const TreeItem item = queue.front();
    queue.pop_front();
    if (!item.is_tensor) {
      const ModuleNode& m = tree.modules[item.index];
      if (!m.children.empty() && !is_no_split(m)) {
        const bool all = rule == LayerRule::kComplete;
        const auto members = member_items(tree, item.index, all, all);
        queue.insert(queue.begin(), members.begin(), members.end());
        continue;
      }
    }
    const Bits size = sizes.at(item);
    if (size > out.bits) {
      out.bits = size;
      out.names = {item.name(tree)};
    } else if (size == out.bits) {
      out.names.push_back(item.name(tree));
    }
  }
  return out;
}

LargestLayer largest_layer(const TensorTree& tree, const ModuleSizes& sizes, LayerRule rule) {
  return largest_layer_among(tree, sizes, root_items(tree), tree.no_split_classes, rule);
}

}  // namespace memfit
