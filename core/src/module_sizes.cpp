#include "memfit/module_sizes.h"

#include <fmt/format.h>

#include "memfit/error.h"

namespace memfit {

bool counted(const TensorInfo& t, const SizeOptions& opt) {
  if (t.is_alias()) return false;
  if (t.era == BufferEra::kLegacyOnly && !opt.include_legacy_buffers) return false;
  if (t.era == BufferEra::kCurrentOnly && opt.include_legacy_buffers) return false;
  return true;
}

Bits tensor_bits(const TensorInfo& t, const SizeOptions& opt) {
  if (!counted(t, opt)) return 0;
  int bits = opt.bool_as_bit ? accounting_bits(t.dtype) : dtype_bits(t.dtype);
  auto special = opt.special_dtypes.find(t.name);
  if (special != opt.special_dtypes.end()) {
    bits = opt.bool_as_bit ? accounting_bits(special->second) : dtype_bits(special->second);
  } else if (opt.dtype && is_floating(t.dtype)) {
    bits = opt.cast_floats ? dtype_bits(*opt.dtype) : std::min(bits, dtype_bits(*opt.dtype));
  }
  Bits out = 0;
  if (__builtin_mul_overflow(t.numel, static_cast<Bits>(bits), &out))
    throw Error(ErrorCode::kOverflow, fmt::format("tensor '{}': size overflows", t.name));
  return out;
}

Bits ModuleSizes::total() const { return at(""); }

Bits ModuleSizes::at(const std::string& prefix) const {
  auto it = bits.find(prefix);
  return it == bits.end() ? 0 : it->second;
}

ModuleSizes compute_module_sizes(const TensorTree& tree, const SizeOptions& opt) {
  // Sum per module first, then bottom-up (a child is always created after its parent, so its
  // index is larger): one string per module and tensor instead of one per dotted prefix.
  const std::size_t nm = tree.modules.size();
  std::vector<Bits> module_bits(nm, 0);
  std::vector<char> module_float(nm, 0), visited(nm, 0);
  ModuleSizes out;
  out.bits.reserve(nm + tree.tensors.size());
  const std::vector<int> order = tree.named_module_tensors();
  std::vector<int> chain;
  for (int ti : order) {
    const TensorInfo& t = tree.tensors[ti];
    if (!counted(t, opt)) continue;
    const Bits size = tensor_bits(t, opt);
    const bool fractional = opt.bool_as_bit && t.dtype == DType::kBool;
    if (__builtin_add_overflow(module_bits[t.module], size, &module_bits[t.module]))
      throw Error(ErrorCode::kOverflow, fmt::format("size of '{}' overflows 64 bits", t.name));
    if (fractional) {
      module_float[t.module] = 1;
      out.python_float.insert(t.name);
    }
    // First-seen order of prefixes, as accelerate's defaultdict fills up.
    chain.clear();
    for (int m = t.module; m >= 0 && !visited[m]; m = tree.modules[m].parent) chain.push_back(m);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      visited[*it] = 1;
      out.order.push_back(tree.modules[*it].name);
    }
    out.order.push_back(t.name);
    out.bits[t.name] = size;
  }
  if (!visited[0]) out.order.insert(out.order.begin(), "");  // a model without tensors
  for (std::size_t m = nm; m-- > 1;) {
    const int parent = tree.modules[m].parent;
    if (__builtin_add_overflow(module_bits[parent], module_bits[m], &module_bits[parent]))
      throw Error(ErrorCode::kOverflow,
                  fmt::format("size of '{}' overflows 64 bits", tree.modules[parent].name));
    module_float[parent] |= module_float[m];
  }
  for (std::size_t m = 0; m < nm; ++m) {
    if (!visited[m] && m != 0) continue;  // accelerate's dict only has prefixes of counted tensors
    out.bits[tree.modules[m].name] = module_bits[m];
    if (module_float[m]) out.python_float.insert(tree.modules[m].name);
  }
  return out;
}

}  // namespace memfit
