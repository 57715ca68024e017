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

namespace {

// An item to look at, and how to name it: inside a copy of a repeated module (compact trees),
// names below the module's compact name take that copy's name instead.
struct Pending {
  TreeItem item;
  int copy = -1;  // into Walk::copies; -1: the tree's own names
};

struct Walk {
  const TensorTree& tree;
  std::vector<CopyNames> copies;

  std::string name(const Pending& p) const {
    const std::string& own = p.item.name(tree);
    return p.copy < 0 ? own : copies[static_cast<std::size_t>(p.copy)](own);
  }
  // The members of a module to look at instead of it: each copy's in turn when it is repeated.
  std::vector<Pending> members(const Pending& p, bool all) {
    const std::vector<TreeItem> items = member_items(tree, p.item.index, all, all);
    const ModuleNode& m = tree.modules[static_cast<std::size_t>(p.item.index)];
    std::vector<Pending> out;
    if (m.repeat <= 1) {
      for (const TreeItem& i : items) out.push_back({i, p.copy});
      return out;
    }
    const std::string first = name(p);
    for (std::int64_t k = 0; k < m.repeat; ++k) {
      copies.push_back({m.name.size(), k == 0 ? first : repeat_name(first, k)});
      for (const TreeItem& i : items) out.push_back({i, static_cast<int>(copies.size() - 1)});
    }
    return out;
  }
  // The names a layer stands for: one, or one per copy of a repeated module.
  std::vector<std::string> names(const Pending& p) const {
    std::vector<std::string> out{name(p)};
    if (p.item.is_tensor) return out;
    const std::int64_t n = tree.modules[static_cast<std::size_t>(p.item.index)].repeat;
    for (std::int64_t k = 1; k < n; ++k) out.push_back(repeat_name(out.front(), k));
    return out;
  }
};

}  // namespace

LargestLayer largest_layer_among(const TensorTree& tree, const ModuleSizes& sizes,
                                 const std::vector<TreeItem>& items,
                                 const std::vector<std::string>& no_split, LayerRule rule) {
  LargestLayer out;
  Walk walk{tree, {}};
  std::deque<Pending> queue;
  for (const TreeItem& i : items) queue.push_back({i, -1});
  auto is_no_split = [&](const ModuleNode& m) {
    return std::find(no_split.begin(), no_split.end(), m.class_name) != no_split.end();
  };
  while (!queue.empty()) {
    const Pending p = queue.front();
    queue.pop_front();
    if (!p.item.is_tensor) {
      const ModuleNode& m = tree.modules[p.item.index];
      if (!m.children.empty() && !is_no_split(m)) {
        const auto members = walk.members(p, rule == LayerRule::kComplete);
        queue.insert(queue.begin(), members.begin(), members.end());
        continue;
      }
    }
    const Bits size = sizes.at(p.item);
    if (size < out.bits) continue;
    if (size > out.bits) {
      out.bits = size;
      out.names.clear();
    }
    for (std::string& n : walk.names(p)) out.names.push_back(std::move(n));
  }
  return out;
}

LargestLayer largest_layer(const TensorTree& tree, const ModuleSizes& sizes, LayerRule rule) {
  return largest_layer_among(tree, sizes, root_items(tree), tree.no_split_classes, rule);
}

}  // namespace memfit
