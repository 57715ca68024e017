#include "memfit/model/tensor_tree.h"

#include <algorithm>
#include <functional>

namespace memfit {
namespace {

// Pre-order over modules (torch's named_modules()), collecting one list of direct tensors.
template <typename Member>
std::vector<int> collect(const TensorTree& t, Member member) {
  std::vector<int> out;
  std::vector<int> stack{0};
  while (!stack.empty()) {
    const int m = stack.back();
    stack.pop_back();
    for (int ti : t.modules[m].*member)
      if (!t.tensors[ti].is_alias()) out.push_back(ti);
    const auto& ch = t.modules[m].children;
    for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.push_back(*it);
  }
  return out;
}

}  // namespace

std::vector<int> TensorTree::named_parameters() const { return collect(*this, &ModuleNode::params); }
std::vector<int> TensorTree::named_buffers() const { return collect(*this, &ModuleNode::buffers); }

std::vector<int> TensorTree::named_module_tensors() const {
  std::vector<int> out = named_parameters();
  std::vector<int> b = named_buffers();
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

std::uint32_t NameIndex::hash(std::string_view s) {
  const std::size_t h = std::hash<std::string_view>{}(s);
  return static_cast<std::uint32_t>(h ^ (static_cast<std::uint64_t>(h) >> 32));  // 64-bit: fold
}

void NameIndex::sort() { std::sort(keys_.begin(), keys_.end()); }

std::vector<std::uint64_t>::const_iterator NameIndex::lower(std::uint32_t h) const {
  return std::lower_bound(keys_.begin(), keys_.end(), key(h, 0));
}

NameIndex NameIndex::remapped(const std::vector<int>& new_index) const {
  NameIndex out;
  out.keys_.reserve(keys_.size());
  for (const std::uint64_t k : keys_)
    if (const int n = new_index[index_of(k)]; n >= 0) out.keys_.push_back(key(hash_of(k), static_cast<std::size_t>(n)));
  return out;
}

void TensorTree::reindex_subset(const TensorTree& from, const std::vector<int>& new_module,
                                const std::vector<int>& new_tensor) {
  if (from.tensor_index_.size() != from.tensors.size() || from.module_index_.size() != from.modules.size()) {
    reindex();
    return;
  }
  tensor_index_ = from.tensor_index_.remapped(new_tensor);
  module_index_ = from.module_index_.remapped(new_module);
}

void TensorTree::reindex() {
  tensor_index_.build(tensors.size(), [&](std::size_t i) -> std::string_view { return tensors[i].name; });
  module_index_.build(modules.size(), [&](std::size_t i) -> std::string_view { return modules[i].name; });
}

std::string TensorTree::duplicate_name() const {
  if (int t = tensor_index_.first_duplicate([&](std::size_t i) -> std::string_view { return tensors[i].name; }); t >= 0)
    return "tensor '" + tensors[t].name + "'";
  if (int m = module_index_.first_duplicate([&](std::size_t i) -> std::string_view { return modules[i].name; }); m >= 0)
    return "module '" + modules[m].name + "'";
  return {};
}

int TensorTree::find_tensor(std::string_view name) const {
  auto name_at = [&](std::size_t i) -> std::string_view { return tensors[i].name; };
  if (tensor_index_.size() == tensors.size()) return tensor_index_.find(name, name_at);
  for (std::size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == name) return static_cast<int>(i);
  return -1;
}

int TensorTree::find_module(std::string_view name) const {
  auto name_at = [&](std::size_t i) -> std::string_view { return modules[i].name; };
  if (module_index_.size() == modules.size()) return module_index_.find(name, name_at);
  for (std::size_t i = 0; i < modules.size(); ++i)
    if (modules[i].name == name) return static_cast<int>(i);
  return -1;
}

bool TensorTree::is_no_split(const ModuleNode& m) const {
  return std::find(no_split_classes.begin(), no_split_classes.end(), m.class_name) !=
         no_split_classes.end();
}

std::uint64_t TensorTree::parameter_count() const {
  const std::vector<std::uint64_t> copies = multiplicities();
  std::uint64_t n = 0;
  for (const auto& t : tensors)
    if (t.kind == TensorKind::kParameter && !t.is_alias()) n += t.numel * copies[static_cast<std::size_t>(t.module)];
  return n;
}

bool TensorTree::has_repeats() const {
  return std::any_of(modules.begin(), modules.end(), [](const ModuleNode& m) { return m.repeat > 1; });
}

std::vector<std::uint64_t> TensorTree::multiplicities() const {
  // A parent always comes before its children, so one pass in index order is enough.
  std::vector<std::uint64_t> out(modules.size(), 1);
  for (std::size_t m = 0; m < modules.size(); ++m) {
    const ModuleNode& n = modules[m];
    const std::uint64_t above = n.parent >= 0 ? out[static_cast<std::size_t>(n.parent)] : 1;
    out[m] = above * static_cast<std::uint64_t>(n.repeat);
  }
  return out;
}

TensorTree for_era(TensorTree tree, bool legacy) {
  const BufferEra drop = legacy ? BufferEra::kCurrentOnly : BufferEra::kLegacyOnly;
  const std::size_t nm = tree.modules.size();
  // A module survives when it had no tensors at all below it (e.g. a tied-only or empty module)
  // or keeps at least one.
  std::vector<int> had(nm, 0), kept(nm, 0);
  for (const auto& t : tree.tensors)
    for (int m = t.module; m >= 0; m = tree.modules[m].parent) {
      had[m] = 1;
      if (t.era != drop) kept[m] = 1;
    }
  std::vector<char> keep_module(nm, 1), keep_tensor(tree.tensors.size(), 1);
  for (std::size_t m = 1; m < nm; ++m)
    keep_module[m] = !(had[m] && !kept[m]) && tree.modules[m].era != drop;
  for (std::size_t i = 0; i < tree.tensors.size(); ++i) keep_tensor[i] = tree.tensors[i].era != drop;
  return keep_marked(std::move(tree), keep_module, keep_tensor);
}

TensorTree keep_marked(TensorTree tree, const std::vector<char>& keep_module,
                       const std::vector<char>& keep_tensor) {
  const std::size_t nm = tree.modules.size();
  TensorTree out;
  out.no_split_classes = tree.no_split_classes;
  out.modules.reserve(nm);
  out.tensors.reserve(tree.tensors.size());
  std::vector<int> new_module(nm, -1), new_tensor(tree.tensors.size(), -1);
  // Each kept module takes its lists over (moved, not rebuilt element by element), then they
  // are narrowed to the kept entries and renumbered in place, in registration order.
  for (std::size_t m = 0; m < nm; ++m) {
    ModuleNode& old = tree.modules[m];
    if (m != 0 && (!keep_module[m] || new_module[old.parent] < 0)) continue;
    new_module[m] = static_cast<int>(out.modules.size());
    old.parent = m == 0 ? -1 : new_module[old.parent];
    out.modules.push_back(std::move(old));  // `tree` is our own copy: move, don't copy
  }
  for (std::size_t i = 0; i < tree.tensors.size(); ++i) {
    TensorInfo& t = tree.tensors[i];
    if (!keep_tensor[i] || new_module[t.module] < 0) continue;
    t.module = new_module[t.module];
    new_tensor[i] = static_cast<int>(out.tensors.size());
    out.tensors.push_back(std::move(t));
  }
  for (auto& t : out.tensors)
    if (t.tied_to >= 0) t.tied_to = new_tensor[t.tied_to];
  auto renumber = [](std::vector<int>& list, const std::vector<int>& to) {
    std::size_t n = 0;
    for (const int i : list)
      if (to[i] >= 0) list[n++] = to[i];
    list.resize(n);
  };
  for (ModuleNode& n : out.modules) {
    renumber(n.children, new_module);
    renumber(n.params, new_tensor);
    renumber(n.buffers, new_tensor);
  }
  out.reindex_subset(tree, new_module, new_tensor);
  return out;
}

}  // namespace memfit
