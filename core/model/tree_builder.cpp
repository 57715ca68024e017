#include "memfit/model/tree_builder.h"

#include <algorithm>

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
  if (mode_ == Mode::kCompare) {
    std::string out = compared_path();
    if (!leaf.empty()) out.append(1, '.').append(leaf);
    return out;
  }
  const std::string& base = tree_.modules[stack_.back()].name;
  if (leaf.empty()) return base;
  if (base.empty()) return std::string(leaf);
  // Plain appends: this runs once per module and tensor, and fmt's engine is slow under -Oz.
  std::string out;
  out.reserve(base.size() + 1 + leaf.size());
  out.append(base).append(1, '.').append(leaf);
  return out;
}

std::uint64_t TreeBuilder::times(std::uint64_t copies, std::int64_t repeat) {
  std::uint64_t c = 0;
  return __builtin_mul_overflow(copies, static_cast<std::uint64_t>(repeat), &c) ? UINT64_MAX : c;
}

int TreeBuilder::open_node(std::string_view name, std::string_view class_name, std::int64_t repeat) {
  const int parent = stack_.back();
  ModuleNode node;
  node.name = path(name);
  node.class_name = std::string(class_name);
  node.parent = parent;
  node.repeat = repeat;
  const int index = static_cast<int>(tree_.modules.size());
  tree_.modules.push_back(std::move(node));
  tree_.modules[parent].children.push_back(index);
  stack_.push_back(index);
  copies_.push_back(times(copies_.back(), repeat));
  return index;
}

void TreeBuilder::close_node() {
  if (stack_.size() > 1) {
    stack_.pop_back();
    copies_.pop_back();
  }
}

void TreeBuilder::open(Step::Kind kind, std::string_view name, std::string_view class_name,
                       std::int64_t repeat, BufferEra era) {
  if (mode_ == Mode::kCompare) {
    if (match_module(kind, name, class_name, repeat, era)) return;
    materialize();
  }
  const int index = open_node(name, class_name, repeat);
  tree_.modules[static_cast<std::size_t>(index)].era = era;
  if (kind == Step::kStateless) close_node();
  if (mode_ == Mode::kRecord) steps_.push_back(Step{kind, index});
}

TreeBuilder::Scope TreeBuilder::module(std::string_view name, std::string_view class_name) {
  open(Step::kOpen, name, class_name, 1, BufferEra::kAlways);
  return Scope(this);
}

TreeBuilder::Scope TreeBuilder::repeated(std::string_view first, std::string_view class_name,
                                         std::int64_t count) {
  if (count < 1 || first.find('.') != std::string_view::npos || !last_index(first))
    throw Error(ErrorCode::kInternal,
                fmt::format("'{}': {} repeated modules must be at least one, named by an index",
                            path(first), count));
  open(Step::kRepeated, first, class_name, count, BufferEra::kAlways);
  return Scope(this);
}

TreeBuilder::Scope TreeBuilder::item(std::int64_t index, std::string_view class_name) {
  if (mode_ != Mode::kBuild) return module(std::to_string(index), class_name);
  if (index < 0)
    throw Error(ErrorCode::kInternal, fmt::format("'{}': item {} of a list", path(), index));
  if (continues_template(index, class_name)) {
    mode_ = Mode::kCompare;
    item_index_ = index;
    matched_ = 1;  // the template's own opening
    open_.assign(1, template_);
    open_copies_.assign(1, copies_.back());
  } else {
    start_template(index, class_name);
  }
  return Scope(this);
}

void TreeBuilder::stateless(std::string_view name, std::string_view class_name, BufferEra era) {
  open(Step::kStateless, name, class_name, 1, era);
}

void TreeBuilder::pop() {
  if (mode_ == Mode::kCompare) {
    if (match_close()) return;
    materialize();
  }
  if (mode_ == Mode::kRecord) {
    steps_.push_back(Step{Step::kClose, -1});
    if (stack_.size() == item_depth_) {
      close_node();
      end_item();
      return;
    }
  }
  close_node();
}

void TreeBuilder::count_tensor(std::uint64_t copies, std::string_view name) {
  // Counted as written out: a compact tree must not describe what an expanded one may not.
  if (__builtin_add_overflow(expanded_tensors_, copies, &expanded_tensors_) ||
      expanded_tensors_ > kMaxTreeTensors)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("the model would have more than {} tensors; the config's sizes are "
                            "not plausible (at '{}')", kMaxTreeTensors, path(name)));
}

int TreeBuilder::add_tensor(std::string_view name, Shape shape, DType dtype, TensorKind kind,
                            bool persistent, BufferEra era) {
  if (mode_ == Mode::kCompare) {
    if (match_tensor(name, shape, dtype, kind, persistent, era)) return -1;
    materialize();
  }
  count_tensor(copies_.back(), name);
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
  t.persistent = persistent;
  t.era = era;
  t.module = stack_.back();
  const int index = static_cast<int>(tree_.tensors.size());
  tree_.tensors.push_back(std::move(t));
  auto& m = tree_.modules[stack_.back()];
  (kind == TensorKind::kParameter ? m.params : m.buffers).push_back(index);
  if (mode_ == Mode::kRecord) steps_.push_back(Step{Step::kTensor, index});
  return index;
}

void TreeBuilder::param(std::string_view name, Shape shape, DType dtype) {
  add_tensor(name, std::move(shape), dtype, TensorKind::kParameter);
}

void TreeBuilder::tied_param(std::string_view name, const std::string& target_full_name) {
  if (mode_ == Mode::kCompare) materialize();  // a tie is never folded
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
  // expand() ties each copy of a repeated module to its own copy: a tie from outside into one
  // would land on the last copy, not on the one named.
  for (int m = tree_.tensors[target].module; m >= 0; m = tree_.modules[static_cast<std::size_t>(m)].parent)
    if (tree_.modules[static_cast<std::size_t>(m)].repeat > 1 &&
        std::find(stack_.begin(), stack_.end(), m) == stack_.end())
      throw Error(ErrorCode::kInternal,
                  fmt::format("'{}' is tied to '{}', inside '{}', which stands for {} copies",
                              path(name), target_full_name, tree_.modules[static_cast<std::size_t>(m)].name,
                              tree_.modules[static_cast<std::size_t>(m)].repeat));
  const TensorInfo copy = tree_.tensors[target];
  const int index = add_tensor(name, copy.shape, copy.dtype, TensorKind::kParameter);
  tree_.tensors[index].tied_to = target;
}

void TreeBuilder::buffer(std::string_view name, Shape shape, DType dtype, bool persistent,
                         BufferEra era) {
  add_tensor(name, std::move(shape), dtype, TensorKind::kBuffer, persistent, era);
}

void TreeBuilder::set_no_split(std::vector<std::string> classes) {
  tree_.no_split_classes = std::move(classes);
}

TensorTree TreeBuilder::finish() {
  if (mode_ != Mode::kBuild)
    throw Error(ErrorCode::kInternal, fmt::format("'{}': an item is still open", path()));
  tree_.reindex();
  if (std::string dup = tree_.duplicate_name(); !dup.empty())
    throw Error(ErrorCode::kInternal, fmt::format("{} registered twice", dup));
  return std::move(tree_);
}

}  // namespace memfit
