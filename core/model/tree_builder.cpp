#include "memfit/model/tree_builder.h"

#include <fmt/format.h>

#include "memfit/error.h"

namespace memfit {

TreeBuilder::TreeBuilder(std::string root_class) {
  ModuleNode root;
  root.class_name = std::move(root_class);
  tree_.modules.push_back(std::move(root));
  stack_.push_back(0);
  copies_.push_back(1);
}

std::string TreeBuilder::path(std::string_view leaf) const {
  const std::string& base = tree_.modules[stack_.back()].name;
  if (leaf.empty()) return base;
  if (base.empty()) return std::string(leaf);
  // Plain appends: this runs once per module and tensor, and fmt's engine is slow under -Oz.
  std::string out;
  out.reserve(base.size() + 1 + leaf.size());
  out.append(base).append(1, '.').append(leaf);
  return out;
}

TreeBuilder::Scope TreeBuilder::module(std::string_view name, std::string_view class_name) {
  const int parent = stack_.back();
  ModuleNode node;
  node.name = path(name);
  node.class_name = std::string(class_name);
  node.parent = parent;
  const int index = static_cast<int>(tree_.modules.size());
  tree_.modules.push_back(std::move(node));
  tree_.modules[parent].children.push_back(index);
  stack_.push_back(index);
  copies_.push_back(copies_.back());
  return Scope(this);
}

TreeBuilder::Scope TreeBuilder::repeated(std::string_view first, std::string_view class_name,
                                         std::int64_t count) {
  if (count < 1 || first.find('.') != std::string_view::npos || !last_index(first))
    throw Error(ErrorCode::kInternal,
                fmt::format("'{}': {} repeated modules must be at least one, named by an index",
                            path(first), count));
  Scope s = module(first, class_name);
  tree_.modules.back().repeat = count;
  std::uint64_t& c = copies_.back();
  if (__builtin_mul_overflow(c, static_cast<std::uint64_t>(count), &c)) c = UINT64_MAX;
  return s;
}

void TreeBuilder::stateless(std::string_view name, std::string_view class_name, BufferEra era) {
  auto s = module(name, class_name);
  tree_.modules.back().era = era;
}

void TreeBuilder::pop() {
  if (stack_.size() > 1) {
    stack_.pop_back();
    copies_.pop_back();
  }
}

int TreeBuilder::add_tensor(std::string_view name, Shape shape, DType dtype, TensorKind kind) {
  // Counted as written out: a compact tree must not describe what an expanded one may not.
  if (__builtin_add_overflow(expanded_tensors_, copies_.back(), &expanded_tensors_) ||
      expanded_tensors_ > kMaxTreeTensors)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("the model would have more than {} tensors; the config's sizes are "
                            "not plausible (at '{}')", kMaxTreeTensors, path(name)));
  TensorInfo t;
  t.name = path(name);
  std::uint64_t numel = 1;
  for (std::int64_t d : shape) {
    if (d < 0)
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("tensor '{}': negative dimension {} in shape", t.name, d));
    if (__builtin_mul_overflow(numel, static_cast<std::uint64_t>(d), &numel))
      throw Error(ErrorCode::kOverflow,
                  fmt::format("tensor '{}': element count overflows 64 bits", t.name));
  }
  // Sizes are kept in bits: the element count times 64 bits must still fit.
  if (numel > (UINT64_MAX >> 7))
    throw Error(ErrorCode::kOverflow,
                fmt::format("tensor '{}': {} elements is too large to size", t.name, numel));
  t.shape = std::move(shape);
  t.numel = numel;
  t.dtype = dtype;
  t.kind = kind;
  t.module = stack_.back();
  const int index = static_cast<int>(tree_.tensors.size());
  tree_.tensors.push_back(std::move(t));
  auto& m = tree_.modules[stack_.back()];
  (kind == TensorKind::kParameter ? m.params : m.buffers).push_back(index);
  return index;
}

void TreeBuilder::param(std::string_view name, Shape shape, DType dtype) {
  add_tensor(name, std::move(shape), dtype, TensorKind::kParameter);
}

void TreeBuilder::tied_param(std::string_view name, const std::string& target_full_name) {
  // Ties are few (an embedding and its head), so a scan from the newest tensor is enough.
  int target = -1;
  for (std::size_t i = tree_.tensors.size(); i-- > 0;)
    if (tree_.tensors[i].name == target_full_name) {
      target = static_cast<int>(i);
      break;
    }
  if (target < 0)
    throw Error(ErrorCode::kInternal,
                fmt::format("'{}' is tied to '{}', which does not exist (yet)", path(name),
                            target_full_name));
  while (tree_.tensors[target].tied_to >= 0) target = tree_.tensors[target].tied_to;
  const TensorInfo copy = tree_.tensors[target];
  const int index = add_tensor(name, copy.shape, copy.dtype, TensorKind::kParameter);
  tree_.tensors[index].tied_to = target;
}

void TreeBuilder::buffer(std::string_view name, Shape shape, DType dtype, bool persistent,
                         BufferEra era) {
  const int index = add_tensor(name, std::move(shape), dtype, TensorKind::kBuffer);
  tree_.tensors[index].persistent = persistent;
  tree_.tensors[index].era = era;
}

void TreeBuilder::set_no_split(std::vector<std::string> classes) {
  tree_.no_split_classes = std::move(classes);
}

TensorTree TreeBuilder::finish() {
  tree_.reindex();
  if (std::string dup = tree_.duplicate_name(); !dup.empty())
    throw Error(ErrorCode::kInternal, fmt::format("{} registered twice", dup));
  return std::move(tree_);
}

}  // namespace memfit
