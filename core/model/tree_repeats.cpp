// Compact trees both ways. expand(): a compact tree (repeated modules described once) written out
// copy by copy. compact(): identical consecutive siblings (decoder layers, experts) folded into one.
//
// expand()'s result must be the tree the family would have built copy by copy: the same names, the same
// module order (pre-order, children in registration order) and the same tensor order, which is
// creation order. A module's subtree was built while it was open, so its tensors form one
// contiguous index range; a module's own tensors therefore go before a child exactly when their
// index is below the child's first tensor. Walking the compact tree with that rule and emitting
// each repeated subtree once per copy gives the built order back.
#include <algorithm>
#include <charconv>
#include <climits>
#include <optional>

#include <fmt/format.h>

#include "memfit/error.h"
#include "memfit/model/tensor_tree.h"

namespace memfit {

std::optional<std::int64_t> last_index(std::string_view name) {
  const std::size_t dot = name.rfind('.');
  const std::string_view last = name.substr(dot == std::string_view::npos ? 0 : dot + 1);
  if (last.empty() || (last.size() > 1 && last[0] == '0')) return std::nullopt;
  std::int64_t k = 0;
  const auto [end, ec] = std::from_chars(last.data(), last.data() + last.size(), k);
  if (ec != std::errc() || end != last.data() + last.size()) return std::nullopt;
  return k;
}

std::string repeat_name(std::string_view first, std::int64_t i) {
  const std::optional<std::int64_t> k = last_index(first);
  if (!k)
    throw Error(ErrorCode::kInternal, fmt::format("repeated module '{}' does not end in an index", first));
  const std::size_t dot = first.rfind('.');
  std::string out(first.substr(0, dot == std::string_view::npos ? 0 : dot + 1));
  out += std::to_string(*k + i);
  return out;
}

namespace {

// Where each module's subtree lies: built while the module was open, it is one range of module
// indices and one of tensor indices.
struct SubtreeRanges {
  std::vector<int> tensors_from, tensors_to;  // by module; INT_MAX / -1 when it holds no tensor
  std::vector<int> modules_to;                // by module: one past its subtree's modules

  explicit SubtreeRanges(const TensorTree& tree) {
    const std::size_t nm = tree.modules.size();
    tensors_from.assign(nm, INT_MAX);
    tensors_to.assign(nm, -1);
    modules_to.resize(nm);
    for (std::size_t m = 0; m < nm; ++m) modules_to[m] = static_cast<int>(m) + 1;
    for (std::size_t t = 0; t < tree.tensors.size(); ++t) {
      const auto m = static_cast<std::size_t>(tree.tensors[t].module);
      tensors_from[m] = std::min(tensors_from[m], static_cast<int>(t));
      tensors_to[m] = std::max(tensors_to[m], static_cast<int>(t) + 1);
    }
    for (std::size_t m = nm; m-- > 1;) {  // a child always comes after its parent
      const auto up = static_cast<std::size_t>(tree.modules[m].parent);
      tensors_from[up] = std::min(tensors_from[up], tensors_from[m]);
      tensors_to[up] = std::max(tensors_to[up], tensors_to[m]);
      modules_to[up] = std::max(modules_to[up], modules_to[m]);
    }
  }
};

class Expander {
 public:
  explicit Expander(const TensorTree& from) : in_(from), ranges_(from), latest_(from.tensors.size(), -1) {}

  TensorTree run() {
    const std::vector<std::uint64_t> copies = in_.multiplicities();
    std::uint64_t modules = 0, tensors = 0;
    for (std::uint64_t c : copies) modules += c;
    for (const TensorInfo& t : in_.tensors) tensors += copies[static_cast<std::size_t>(t.module)];
    out_.modules.reserve(modules);
    out_.tensors.reserve(tensors);
    out_.no_split_classes = in_.no_split_classes;
    emit(0, -1, in_.modules[0].name, CopyNames{});
    out_.reindex();
    if (std::string dup = out_.duplicate_name(); !dup.empty())
      throw Error(ErrorCode::kInternal, fmt::format("{} registered twice once repeats are named", dup));
    return std::move(out_);
  }

 private:
  void emit(int m, int parent, std::string name, const CopyNames& rename) {
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
      const int before = ranges_.tensors_from[static_cast<std::size_t>(c)];
      for (; next != own.end() && *next < before; ++next) tensor(*next, self, rename);
      child(c, self, rename);
    }
    for (; next != own.end(); ++next) tensor(*next, self, rename);
  }

  void child(int c, int parent, const CopyNames& rename) {
    const ModuleNode& node = in_.modules[static_cast<std::size_t>(c)];
    const std::string first = rename(node.name);
    if (node.repeat <= 1) {
      emit(c, parent, first, rename);
      return;
    }
    for (std::int64_t i = 0; i < node.repeat; ++i) {
      std::string name = i == 0 ? first : repeat_name(first, i);
      CopyNames inner{node.name.size(), name};
      emit(c, parent, std::move(name), inner);
    }
  }

  void tensor(int t, int module, const CopyNames& rename) {
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
  const SubtreeRanges ranges_;
  TensorTree out_;
  std::vector<int> latest_;  // by compact tensor: the index of its latest copy
};

// Folds runs of identical siblings named by consecutive indices. A module's subtree occupies one
// range of module indices and one of tensor indices (it was built while open), so two siblings
// are the same when their ranges match entry by entry, names compared below their own name.
class Compactor {
 public:
  explicit Compactor(const TensorTree& from) : in_(from), ranges_(from) {
    // A tie target must stay where its alias finds it: a copy holding one is never dropped.
    target_.assign(in_.tensors.size(), 0);
    for (const TensorInfo& t : in_.tensors)
      if (t.tied_to >= 0) target_[static_cast<std::size_t>(t.tied_to)] = 1;
  }

  // `tree` is the compactor's input, moved in once it has been read.
  TensorTree run(TensorTree&& tree) {
    keep_module_.assign(in_.modules.size(), 1);
    repeat_.resize(in_.modules.size());
    for (std::size_t m = 0; m < in_.modules.size(); ++m) repeat_[m] = in_.modules[m].repeat;
    for (std::size_t m = 0; m < in_.modules.size(); ++m)
      if (keep_module_[m]) fold_children(static_cast<int>(m));
    return rebuilt(std::move(tree));
  }

 private:
  void fold_children(int parent) {
    const std::vector<int>& ch = in_.modules[static_cast<std::size_t>(parent)].children;
    std::size_t i = 0;
    while (i < ch.size()) {
      const int first = ch[i];
      std::optional<std::int64_t> start = last_index(in_.modules[static_cast<std::size_t>(first)].name);
      std::size_t j = i + 1;
      if (start) {
        std::int64_t count = repeat_[static_cast<std::size_t>(first)];
        for (; j < ch.size(); ++j) {
          const int next = ch[j];
          const auto k = last_index(in_.modules[static_cast<std::size_t>(next)].name);
          if (!k || *k != *start + count || !adjacent(ch[j - 1], next) || !droppable(next) || !same(first, next)) break;
          count += repeat_[static_cast<std::size_t>(next)];
          drop(next);
        }
        repeat_[static_cast<std::size_t>(first)] = count;
      }
      i = j;
    }
  }

  // No tensor of the parent lies between the two siblings' tensors.
  bool adjacent(int a, int b) const {
    const int a_to = ranges_.tensors_to[static_cast<std::size_t>(a)], b_from = ranges_.tensors_from[static_cast<std::size_t>(b)];
    return a_to < 0 || b_from == INT_MAX || a_to == b_from;
  }

  bool droppable(int m) const {
    for (int t = first_tensor(m); t < first_tensor(m) + tensor_count(m); ++t)
      if (in_.tensors[static_cast<std::size_t>(t)].tied_to >= 0 || target_[static_cast<std::size_t>(t)]) return false;
    return true;
  }

  int first_tensor(int m) const {
    const int f = ranges_.tensors_from[static_cast<std::size_t>(m)];
    return f == INT_MAX ? 0 : f;
  }
  int tensor_count(int m) const {
    const int to = ranges_.tensors_to[static_cast<std::size_t>(m)];
    return to < 0 ? 0 : to - ranges_.tensors_from[static_cast<std::size_t>(m)];
  }

  bool same(int a, int b) const {
    const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
    if (ranges_.modules_to[ua] - a != ranges_.modules_to[ub] - b) return false;
    const int ta = first_tensor(a), tb = first_tensor(b);
    if (tensor_count(a) != tensor_count(b)) return false;
    const std::size_t na = in_.modules[ua].name.size(), nb = in_.modules[ub].name.size();
    auto below = [](const std::string& s, std::size_t n) { return std::string_view(s).substr(n); };
    for (int i = 0; a + i < ranges_.modules_to[ua]; ++i) {
      const ModuleNode& x = in_.modules[static_cast<std::size_t>(a + i)];
      const ModuleNode& y = in_.modules[static_cast<std::size_t>(b + i)];
      if (x.class_name != y.class_name || x.era != y.era || x.repeat != y.repeat ||
          x.children.size() != y.children.size() || x.params.size() != y.params.size() ||
          x.buffers.size() != y.buffers.size() || (i > 0 && below(x.name, na) != below(y.name, nb)))
        return false;
      for (std::size_t c = 0; c < x.children.size(); ++c)
        if (x.children[c] - a != y.children[c] - b) return false;
      for (std::size_t p = 0; p < x.params.size(); ++p)
        if (x.params[p] - ta != y.params[p] - tb) return false;
      for (std::size_t p = 0; p < x.buffers.size(); ++p)
        if (x.buffers[p] - ta != y.buffers[p] - tb) return false;
    }
    for (int i = 0; i < tensor_count(a); ++i) {
      const TensorInfo& x = in_.tensors[static_cast<std::size_t>(ta + i)];
      const TensorInfo& y = in_.tensors[static_cast<std::size_t>(tb + i)];
      if (x.shape != y.shape || x.dtype != y.dtype || x.kind != y.kind || x.persistent != y.persistent ||
          x.era != y.era || x.tied_to >= 0 || y.tied_to >= 0 || x.keep_fp32 != y.keep_fp32 ||
          x.stored_fp32 != y.stored_fp32 || x.module - a != y.module - b ||
          below(x.name, na) != below(y.name, nb))
        return false;
    }
    return true;
  }

  void drop(int m) {
    for (int i = m; i < ranges_.modules_to[static_cast<std::size_t>(m)]; ++i) keep_module_[static_cast<std::size_t>(i)] = 0;
  }

  // The input (owned by the caller, no longer read) narrowed to the first copy of each run.
  TensorTree rebuilt(TensorTree&& tree) const {
    for (std::size_t m = 0; m < tree.modules.size(); ++m) tree.modules[m].repeat = repeat_[m];
    std::vector<char> keep_tensor(tree.tensors.size());
    for (std::size_t t = 0; t < tree.tensors.size(); ++t)
      keep_tensor[t] = keep_module_[static_cast<std::size_t>(tree.tensors[t].module)];
    return keep_marked(std::move(tree), keep_module_, keep_tensor);
  }

  const TensorTree& in_;
  const SubtreeRanges ranges_;
  std::vector<char> target_;                    // by tensor: an alias points at it
  std::vector<char> keep_module_;
  std::vector<std::int64_t> repeat_;
};

}  // namespace

TensorTree compact(TensorTree tree) { return Compactor(tree).run(std::move(tree)); }

TensorTree expand(TensorTree tree) {
  if (!tree.has_repeats()) return tree;
  return Expander(tree).run();
}

}  // namespace memfit
