#include "memfit/memory/module_sizes.h"

#include <fmt/format.h>

#include "memfit/error.h"
#include "memfit/model/keep_fp32.h"

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
  // (An empty map is the common case; find() would still hash every name.)
  auto special = opt.special_dtypes.empty() ? opt.special_dtypes.end() : opt.special_dtypes.find(t.name);
  if (special != opt.special_dtypes.end()) {
    bits = opt.bool_as_bit ? accounting_bits(special->second) : dtype_bits(special->second);
  } else if (opt.dtype && is_floating(t.dtype)) {
    if (opt.keep_fp32 && kept_in_fp32(t.keep_fp32, *opt.dtype))
      bits = dtype_bits(DType::kF32);
    else
      bits = opt.cast_floats ? dtype_bits(*opt.dtype) : std::min(bits, dtype_bits(*opt.dtype));
  }
  Bits out = 0;
  if (__builtin_mul_overflow(t.numel, static_cast<Bits>(bits), &out))
    throw Error(ErrorCode::kOverflow, fmt::format("tensor '{}': size overflows", t.name));
  return out;
}

Bits ModuleSizes::at(const TensorTree& tree, std::string_view name) const {
  if (int t = tree.find_tensor(name); t >= 0) return tensor_bits[t];
  if (int m = tree.find_module(name); m >= 0) return module_listed[m] || m == 0 ? module_bits[m] : 0;
  return 0;
}

bool ModuleSizes::fractional(const TensorTree& tree, std::string_view name) const {
  if (int t = tree.find_tensor(name); t >= 0) return tensor_fractional[t] != 0;
  if (int m = tree.find_module(name); m >= 0) return module_fractional[m] != 0;
  return false;
}

ModuleSizes compute_module_sizes(const TensorTree& tree, const SizeOptions& opt) {
  return compute_module_sizes(tree, opt, tree.named_module_tensors());
}

ModuleSizes compute_module_sizes(const TensorTree& tree, const SizeOptions& opt,
                                 const std::vector<int>& order) {
  // Sum per module first, then bottom-up (a child is always created after its parent, so its
  // index is larger).
  const std::size_t nm = tree.modules.size(), nt = tree.tensors.size();
  ModuleSizes out;
  out.module_bits.assign(nm, 0);
  out.tensor_bits.assign(nt, 0);
  out.module_listed.assign(nm, 0);
  out.tensor_listed.assign(nt, 0);
  out.module_fractional.assign(nm, 0);
  out.tensor_fractional.assign(nt, 0);
  out.order.reserve(nm + nt);
  std::vector<int> chain;
  for (int ti : order) {
    const TensorInfo& t = tree.tensors[ti];
    if (!counted(t, opt)) continue;
    const Bits size = tensor_bits(t, opt);
    Bits& mb = out.module_bits[t.module];
    if (__builtin_add_overflow(mb, size, &mb))
      throw Error(ErrorCode::kOverflow, fmt::format("size of '{}' overflows 64 bits", t.name));
    if (opt.bool_as_bit && t.dtype == DType::kBool) {
      out.module_fractional[t.module] = 1;
      out.tensor_fractional[ti] = 1;
    }
    // First-seen order of prefixes, as accelerate's defaultdict fills up.
    chain.clear();
    for (int m = t.module; m >= 0 && !out.module_listed[m]; m = tree.modules[m].parent)
      chain.push_back(m);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      out.module_listed[*it] = 1;
      out.order.push_back({false, *it});
    }
    out.order.push_back({true, ti});
    out.tensor_bits[ti] = size;
    out.tensor_listed[ti] = 1;
  }
  if (!out.module_listed[0]) out.order.insert(out.order.begin(), TreeItem{false, 0});  // no tensors
  out.module_listed[0] = 1;
  // A repeated module's size is one copy's (what each of its names weighs); its parent holds
  // every copy.
  for (std::size_t m = nm; m-- > 1;) {
    const int parent = tree.modules[m].parent;
    Bits all = 0;
    if (__builtin_mul_overflow(out.module_bits[m], static_cast<Bits>(tree.modules[m].repeat), &all) ||
        __builtin_add_overflow(out.module_bits[parent], all, &out.module_bits[parent]))
      throw Error(ErrorCode::kOverflow,
                  fmt::format("size of '{}' overflows 64 bits", tree.modules[parent].name));
    out.module_fractional[parent] |= out.module_fractional[m];
  }
  return out;
}

}  // namespace memfit
