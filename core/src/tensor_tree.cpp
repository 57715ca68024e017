#include "memfit/tensor_tree.h"

#include <algorithm>

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

int TensorTree::find_tensor(const std::string& name) const {
  for (std::size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == name) return static_cast<int>(i);
  return -1;
}

int TensorTree::find_module(const std::string& name) const {
  for (std::size_t i = 0; i < modules.size(); ++i)
    if (modules[i].name == name) return static_cast<int>(i);
  return -1;
}

bool TensorTree::is_no_split(const ModuleNode& m) const {
  return std::find(no_split_classes.begin(), no_split_classes.end(), m.class_name) !=
         no_split_classes.end();
}

std::uint64_t TensorTree::parameter_count() const {
  std::uint64_t n = 0;
  for (const auto& t : tensors)
    if (t.kind == TensorKind::kParameter && !t.is_alias()) n += t.numel;
  return n;
}

}  // namespace memfit
