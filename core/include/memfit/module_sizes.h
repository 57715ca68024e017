// memfit/module_sizes.h — accelerate's compute_module_sizes(), exact.
//
// Every tensor's size is added to every dotted prefix of its name ("" is the total). Sizes are
// in bits so accelerate's 1/8-byte bool stays exact.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "memfit/dtype.h"
#include "memfit/tensor_tree.h"

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
  // Per-tensor dtype overrides by full name (accelerate's special_dtypes): applied to any tensor.
  std::unordered_map<std::string, DType> special_dtypes;
};

struct ModuleSizes {
  std::vector<std::string> order;  // prefixes in first-seen order ("" first)
  std::unordered_map<std::string, Bits> bits;
  // Prefixes a bool tensor contributed to: accelerate's size there is a Python float (1/8 is a
  // float), which changes how values under 1 KB print.
  std::unordered_set<std::string> python_float;
  Bits total() const;
  Bits at(const std::string& prefix) const;  // 0 when absent (accelerate's defaultdict)
};

// Bits one tensor occupies under these options (0 for a tied alias).
Bits tensor_bits(const TensorInfo& t, const SizeOptions& opt);
bool counted(const TensorInfo& t, const SizeOptions& opt);
ModuleSizes compute_module_sizes(const TensorTree& tree, const SizeOptions& opt);

}  // namespace memfit
