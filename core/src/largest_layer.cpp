#include "memfit/largest_layer.h"

#include <deque>

namespace memfit {
namespace {

struct Item {
  bool is_tensor;
  int index;
};

void push_members(const TensorTree& tree, const ModuleNode& m, bool with_direct_tensors,
                  std::deque<Item>& queue) {
  // Items are pushed to the front in reverse so they come out in registration order.
  std::vector<Item> items;
  if (with_direct_tensors)
    for (int p : m.params)
      if (!tree.tensors[p].is_alias()) items.push_back({true, p});
  for (int c : m.children) items.push_back({false, c});
  if (with_direct_tensors)
    for (int b : m.buffers) items.push_back({true, b});
  for (auto it = items.rbegin(); it != items.rend(); ++it) queue.push_front(*it);
}

}  // namespace

LargestLayer largest_layer(const TensorTree& tree, const ModuleSizes& sizes, LayerRule rule) {
  LargestLayer out;
  std::deque<Item> queue;
  push_members(tree, tree.root(), /*with_direct_tensors=*/true, queue);
  while (!queue.empty()) {
    const Item item = queue.front();
    queue.pop_front();
    const std::string* name = nullptr;
    if (item.is_tensor) {
      name = &tree.tensors[item.index].name;
    } else {
      const ModuleNode& m = tree.modules[item.index];
      if (!m.children.empty() && !tree.is_no_split(m)) {
        push_members(tree, m, rule == LayerRule::kComplete, queue);
        continue;
      }
      name = &m.name;
    }
    const Bits size = sizes.at(*name);
    if (size > out.bits) {
      out.bits = size;
      out.names = {*name};
    } else if (size == out.bits) {
      out.names.push_back(*name);
    }
  }
  return out;
}

}  // namespace memfit
