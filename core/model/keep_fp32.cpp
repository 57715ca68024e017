#include "memfit/model/keep_fp32.h"

#include <string_view>

namespace memfit {

bool keep_fp32_entry_matches(const std::string& name, const std::string& entry) {
  if (entry.empty()) return false;
  for (std::size_t at = name.find(entry); at != std::string::npos; at = name.find(entry, at + 1)) {
    const std::size_t end = at + entry.size();
    const bool starts = at == 0 || name[at - 1] == '.';
    const bool ends = end == name.size() || name[end] == '.';
    if (starts && ends) return true;
  }
  return false;
}

std::size_t keep_in_fp32(TensorTree& tree, const std::vector<std::string>& entries, KeepFp32 rule,
                         bool stored_fp32) {
  std::size_t marked = 0;
  for (TensorInfo& t : tree.tensors) {
    if (!is_floating(t.dtype)) continue;
    bool match = false;
    for (const auto& e : entries) match = match || keep_fp32_entry_matches(t.name, e);
    if (!match) continue;
    // kHalfLoads keeps in more loads than kFloat16Loads: the stronger rule wins.
    if (static_cast<int>(rule) > static_cast<int>(t.keep_fp32)) t.keep_fp32 = rule;
    t.stored_fp32 = t.stored_fp32 || stored_fp32;
    ++marked;
  }
  return marked;
}

void keep_rotary_fp32(TensorTree& tree) {
  const std::string suffix = "inv_freq";
  for (TensorInfo& t : tree.tensors) {
    if (t.kind != TensorKind::kBuffer || !is_floating(t.dtype)) continue;
    const std::size_t dot = t.name.rfind('.');
    const std::string_view leaf = std::string_view(t.name).substr(dot == std::string::npos ? 0 : dot + 1);
    if (leaf.size() >= suffix.size() && leaf.compare(leaf.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        t.keep_fp32 == KeepFp32::kNo)
      t.keep_fp32 = KeepFp32::kHalfLoads;
  }
}

void adopt_keep_fp32(TensorTree& checkpoint_tree, const TensorTree& config_tree) {
  for (TensorInfo& t : checkpoint_tree.tensors)
    if (const int i = config_tree.find_tensor(t.name); i >= 0)
      t.keep_fp32 = config_tree.tensors[static_cast<std::size_t>(i)].keep_fp32;
}

bool kept_in_fp32(KeepFp32 rule, DType load) {
  switch (rule) {
    case KeepFp32::kNo: return false;
    case KeepFp32::kFloat16Loads: return load == DType::kF16;
    case KeepFp32::kHalfLoads: return load == DType::kF16 || load == DType::kBF16;
  }
  return false;
}

}  // namespace memfit
