#include "memfit/tree_builder.h"

#include <fmt/format.h>

#include "memfit/error.h"

namespace memfit {

TreeBuilder::TreeBuilder(std::string root_class) {
  ModuleNode root;
  root.class_name = std::move(root_class);
  tree_.modules.push_back(std::move(root));
  stack_.push_back(0);
  module_index_[""] = 0;
}

std::string TreeBuilder::path(std::string_view leaf) const {
  const std::string& base = tree_.modules[stack_.back()].name;
  if (leaf.empty()) return base;
  if (base.empty()) return std::string(leaf);
  return fmt::format("{}.{}", base, leaf);
}

TreeBuilder::Scope TreeBuilder::module(std::string_view name, std::string_view class_name) {
  std::string full = path(name);
  const int parent = stack_.back();
  auto found = module_index_.find(full);
  if (found != module_index_.end())
    throw Error(ErrorCode::kInternal, fmt::format("module '{}' registered twice", full));
  ModuleNode node;
  node.name = full;
  node.class_name = std::string(class_name);
  node.parent = parent;
  const int index = static_cast<int>(tree_.modules.size());
  tree_.modules.push_back(std::move(node));
  tree_.modules[parent].children.push_back(index);
  module_index_[full] = index;
  stack_.push_back(index);
  return Scope(this);
}

void TreeBuilder::pop() {
  if (stack_.size() > 1) stack_.pop_back();
}

int TreeBuilder::add_tensor(std::string_view name, Shape shape, DType dtype, TensorKind kind) {
  if (tree_.tensors.size() >= kMaxTreeTensors)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("the model would have more than {} tensors; the config's sizes are "
                            "not plausible (at '{}')", kMaxTreeTensors, path(name)));
  TensorInfo t;
  t.name = path(name);
  if (tensor_index_.count(t.name))
    throw Error(ErrorCode::kInternal, fmt::format("tensor '{}' registered twice", t.name));
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
  tensor_index_[t.name] = index;
  tree_.tensors.push_back(std::move(t));
  auto& m = tree_.modules[stack_.back()];
  (kind == TensorKind::kParameter ? m.params : m.buffers).push_back(index);
  return index;
}

void TreeBuilder::param(std::string_view name, Shape shape, DType dtype) {
  add_tensor(name, std::move(shape), dtype, TensorKind::kParameter);
}

void TreeBuilder::tied_param(std::string_view name, const std::string& target_full_name) {
  auto it = tensor_index_.find(target_full_name);
  if (it == tensor_index_.end())
    throw Error(ErrorCode::kInternal,
                fmt::format("'{}' is tied to '{}', which does not exist (yet)", path(name),
                            target_full_name));
  int target = it->second;
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
  return std::move(tree_);
}

}  // namespace memfit
