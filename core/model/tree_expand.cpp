// expand(): a compact tree (repeated modules described once) written out copy by copy.
//
// The result must be the tree the family would have built copy by copy: the same names, the same
// module order (pre-order, children in registration order) and the same tensor order, which is
// creation order. A module's subtree was built while it was open, so its tensors form one
// contiguous index range; a module's own tensors therefore go before a child exactly when their
// index is below the child's first tensor. Walking the compact tree with that rule and emitting
// each repeated subtree once per copy gives the built order back.
#include <algorithm>
#include <charconv>
#include <climits>

#include <fmt/format.h>

#include "memfit/error.h"
#include "memfit/model/tensor_tree.h"

namespace memfit {

std::string repeat_name(std::string_view first, std::int64_t i) {
  const std::size_t dot = first.rfind('.');
  const std::size_t at = dot == std::string_view::npos ? 0 : dot + 1;
  const std::string_view last = first.substr(at);
  std::int64_t k = 0;
  const auto [end, ec] = std::from_chars(last.data(), last.data() + last.size(), k);
  if (ec != std::errc() || end != last.data() + last.size())
    throw Error(ErrorCode::kInternal, fmt::format("repeated module '{}' does not end in an index", first));
  std::string out(first.substr(0, at));
  out += std::to_string(k + i);
  return out;
}

namespace {

class Expander {
 public:
  explicit Expander(const TensorTree& from) : in_(from), latest_(from.tensors.size(), -1) {
    first_tensor_.assign(in_.modules.size(), INT_MAX);
    for (std::size_t t = 0; t < in_.tensors.size(); ++t) {
      int& f = first_tensor_[static_cast<std::size_t>(in_.tensors[t].module)];
      f = std::min(f, static_cast<int>(t));
    }
    for (std::size_t m = in_.modules.size(); m-- > 1;) {
      int& up = first_tensor_[static_cast<std::size_t>(in_.modules[m].parent)];
      up = std::min(up, first_tensor_[m]);
    }
  }

  TensorTree run() {
    const std::vector<std::uint64_t> copies = in_.multiplicities();
    std::uint64_t modules = 0, tensors = 0;
    for (std::uint64_t c : copies) modules += c;
    for (const TensorInfo& t : in_.tensors) tensors += copies[static_cast<std::size_t>(t.module)];
    out_.modules.reserve(modules);
    out_.tensors.reserve(tensors);
    out_.no_split_classes = in_.no_split_classes;
    emit(0, -1, in_.modules[0].name, Rename{0, {}});
    out_.reindex();
    if (std::string dup = out_.duplicate_name(); !dup.empty())
      throw Error(ErrorCode::kInternal, fmt::format("{} registered twice once repeats are named", dup));
    return std::move(out_);
  }

 private:
  // Names below a copy: the compact name's first `strip` characters become `prefix`.
  struct Rename {
    std::size_t strip;
    std::string prefix;
    std::string operator()(const std::string& name) const { return prefix + name.substr(strip); }
  };

  void emit(int m, int parent, std::string name, const Rename& rename) {
    const ModuleNode& node = in_.modules[static_cast<std::size_t>(m)];
    const int self = static_cast<int>(out_.modules.size());
    ModuleNode copy;
    copy.name = std::move(name);
    copy.class_name = node.class_name;
    copy.parent = parent;
    copy.era = node.era;
    out_.modules.push_back(std::move(copy));
    if (parent >= 0) out_.modules[static_cast<std::size_t>(parent)].children.push_back(self);

    // The module's own tensors in creation order, interleaved with its children's subtrees.
    std::vector<int> own(node.params);
    own.insert(own.end(), node.buffers.begin(), node.buffers.end());
    std::sort(own.begin(), own.end());
    auto next = own.begin();
    for (int c : node.children) {
      const int before = first_tensor_[static_cast<std::size_t>(c)];
      for (; next != own.end() && *next < before; ++next) tensor(*next, self, rename);
      child(c, self, rename);
    }
    for (; next != own.end(); ++next) tensor(*next, self, rename);
  }

  void child(int c, int parent, const Rename& rename) {
    const ModuleNode& node = in_.modules[static_cast<std::size_t>(c)];
    const std::string first = rename(node.name);
    if (node.repeat <= 1) {
      emit(c, parent, first, rename);
      return;
    }
    for (std::int64_t i = 0; i < node.repeat; ++i) {
      std::string name = i == 0 ? first : repeat_name(first, i);
      Rename inner{node.name.size(), name};
      emit(c, parent, std::move(name), inner);
    }
  }

  void tensor(int t, int module, const Rename& rename) {
    const TensorInfo& x = in_.tensors[static_cast<std::size_t>(t)];
    TensorInfo copy = x;
    copy.name = rename(x.name);
    copy.module = module;
    // A tie names an earlier tensor: within a copy, that copy's own (the latest one emitted).
    if (x.tied_to >= 0) copy.tied_to = latest_[static_cast<std::size_t>(x.tied_to)];
    const int index = static_cast<int>(out_.tensors.size());
    latest_[static_cast<std::size_t>(t)] = index;
    ModuleNode& owner = out_.modules[static_cast<std::size_t>(module)];
    (x.kind == TensorKind::kParameter ? owner.params : owner.buffers).push_back(index);
    out_.tensors.push_back(std::move(copy));
  }

  const TensorTree& in_;
  TensorTree out_;
  std::vector<int> first_tensor_;  // by compact module: its subtree's first tensor (INT_MAX: none)
  std::vector<int> latest_;        // by compact tensor: the index of its latest copy
};

}  // namespace

TensorTree expand(TensorTree tree) {
  if (!tree.has_repeats()) return tree;
  return Expander(tree).run();
}

}  // namespace memfit
