// memfit/memory/module_sizes.h — accelerate's compute_module_sizes(), exact.
//
// Every tensor's size is added to every dotted prefix of its name ("" is the total). Sizes are
// in bits so accelerate's 1/8-byte bool stays exact.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <map>
#include <vector>

#include "memfit/model/dtype.h"
#include "memfit/model/tensor_tree.h"

namespace memfit {

using Bits = std::uint64_t;

inline double bits_to_bytes(Bits b) { return static_cast<double>(b) / 8.0; }

struct SizeOptions {
  // true: buffers as transformers 4.40 allocates them (compat mode: kLegacyOnly counted,
  // kCurrentOnly not); false: as current transformers does (the reverse).
  bool include_legacy_buffers = true;
  bool bool_as_bit = true;             // accelerate's dtype_byte_size(bool) = 1/8
  // When set, floating tensors are counted at min(their size, this dtype's size); integer and
  // bool tensors keep their own size (what accelerate does with `dtype=`).
  std::optional<DType> dtype;
  // With `dtype`: count floating tensors at exactly that dtype (a load with torch_dtype casts
  // both ways) instead of accelerate's min(). Used for checkpoints stored in half precision.
  bool cast_floats = false;
  // With `dtype`: tensors transformers keeps in float32 in a load at that dtype (TensorInfo's
  // keep_fp32) are counted at float32. memfit's own figures set it; accelerate's table does not
  // (its estimate-memory builds an empty float32 model and knows no such rule).
  bool keep_fp32 = false;
  // Per-tensor dtype overrides by full name (accelerate's special_dtypes): applied to any tensor.
  std::map<std::string, DType> special_dtypes;
};

// accelerate's module_sizes dict, kept by tree index: estimating a 100k-tensor model must not
// build and hash 100k strings per dtype. A name lookup goes through the tree's name index.
// Over a compact tree a repeated module and everything below it are sized per copy, listed once
// (under the first copy's names); its parent counts every copy.
struct ModuleSizes {
  std::vector<Bits> module_bits;   // by module index; [0] is the root, i.e. the total
  std::vector<Bits> tensor_bits;   // by tensor index; 0 for a tensor that is not counted
  std::vector<char> module_listed; // the dict has this prefix (a counted tensor lies under it)
  std::vector<char> tensor_listed;
  // A bool tensor (1/8 byte in accelerate) lies under it: the size is then a Python float, which
  // changes how values under 1 KB print.
  std::vector<char> module_fractional, tensor_fractional;
  std::vector<TreeItem> order;     // the dict's keys in first-seen order (root first)

  Bits total() const { return module_bits.empty() ? 0 : module_bits[0]; }
  Bits at(const TreeItem& item) const {
    return item.is_tensor ? tensor_bits[item.index] : module_bits[item.index];
  }
  // 0 when absent (accelerate's defaultdict).
  Bits at(const TensorTree& tree, std::string_view name) const;
  bool fractional(const TreeItem& item) const {
    return item.is_tensor ? tensor_fractional[item.index] != 0
                          : module_fractional[item.index] != 0;
  }
  bool fractional(const TensorTree& tree, std::string_view name) const;
};

// Bits one tensor occupies under these options (0 for a tied alias).
Bits tensor_bits(const TensorInfo& t, const SizeOptions& opt);
bool counted(const TensorInfo& t, const SizeOptions& opt);
ModuleSizes compute_module_sizes(const TensorTree& tree, const SizeOptions& opt);
// The same with tree.named_module_tensors() computed once by a caller that sizes several ways.
ModuleSizes compute_module_sizes(const TensorTree& tree, const SizeOptions& opt,
                                 const std::vector<int>& order);

}  // namespace memfit
