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
  if (opt.dtype && is_floating(t.dtype))
    bits = opt.cast_floats ? dtype_bits(*opt.dtype) : std::min(bits, dtype_bits(*opt.dtype));
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
  ModuleSizes out;
  out.bits.reserve(tree.tensors.size() * 2 + tree.modules.size());
  bool fractional = false;  // the current tensor is counted at a fraction of a byte
  auto add = [&](const std::string& prefix, Bits size) {
    if (fractional) out.python_float.insert(prefix);
    auto [it, inserted] = out.bits.try_emplace(prefix, 0);
    if (inserted) out.order.push_back(prefix);
    if (__builtin_add_overflow(it->second, size, &it->second))
      throw Error(ErrorCode::kOverflow,
                  fmt::format("size of '{}' overflows 64 bits", prefix.empty() ? "model" : prefix));
  };
  add("", 0);  // the total exists even for a model without tensors
  for (int ti : tree.named_module_tensors()) {
    const TensorInfo& t = tree.tensors[ti];
    if (!counted(t, opt)) continue;
    const Bits size = tensor_bits(t, opt);
    fractional = opt.bool_as_bit && t.dtype == DType::kBool;
    add("", size);
    for (std::size_t pos = t.name.find('.'); pos != std::string::npos;
         pos = t.name.find('.', pos + 1))
      add(t.name.substr(0, pos), size);
    add(t.name, size);
  }
  return out;
}

}  // namespace memfit
