#include "memfit/memory/quantization.h"

#include <cmath>

#include <fmt/format.h>

#include "memfit/error.h"
#include "memfit/memory/module_sizes.h"
#include "memfit/option_error.h"

namespace memfit {
namespace {

double ceil_div(double a, double b) { return std::ceil(a / b); }

bool name_matches(const std::string& name, const std::string& key) {
  if (key.empty()) return false;
  if (name == key) return true;
  if (name.size() > key.size() && name.compare(name.size() - key.size() - 1, key.size() + 1, "." + key) == 0)
    return true;
  return (name + ".").find(key + ".") != std::string::npos;
}

}  // namespace

QuantScheme quant_scheme_for(WeightQuant quant, bool gguf) {
  QuantScheme s;
  if (quant == WeightQuant::kQ8_0 || (gguf && quant == WeightQuant::kInt8)) {
    s.method = QuantMethod::kGgufQ8_0;
    s.bits = 8;
  } else if (quant == WeightQuant::kQ4_0 || (gguf && quant == WeightQuant::kInt4)) {
    s.method = QuantMethod::kGgufQ4_0;
    s.bits = 4;
  } else if (quant == WeightQuant::kInt8) {
    s.method = QuantMethod::kBnb8;
    s.bits = 8;
  } else if (quant == WeightQuant::kFp8) {
    s.method = QuantMethod::kFp8;
    s.bits = 8;
  } else {  // int4, nf4, fp4
    s.method = QuantMethod::kBnb4;
    s.bits = 4;
  }
  return s;
}

QuantScheme qlora_scheme() {
  QuantScheme s;
  s.method = QuantMethod::kBnb4;
  s.bits = 4;
  s.double_quant = true;
  return s;
}

bool is_quantized_by(const LinearLayer& layer, const std::string& module_name, const QuantScheme& s) {
  if (s.method == QuantMethod::kGgufQ8_0 || s.method == QuantMethod::kGgufQ4_0)
    return layer.is_linear() || layer.kind == LayerKind::kEmbedding;  // every matrix
  if (!layer.is_linear() || layer.output_head) return false;
  for (const auto& k : s.skip_modules)
    if (name_matches(module_name, k)) return false;
  if ((s.method == QuantMethod::kGptq || s.method == QuantMethod::kAwq) && !layer.in_block) return false;
  return true;
}

double quantized_layer_bytes(const LinearLayer& l, const QuantScheme& s) {
  const double in = static_cast<double>(l.in), out = static_cast<double>(l.out);
  const double n = in * out;
  const double bits = s.bits;
  const double groups = s.group_size > 0 ? ceil_div(in, static_cast<double>(s.group_size)) : 1;
  switch (s.method) {
    case QuantMethod::kGptq:
      return ceil_div(in * bits, 32) * out * 4      // qweight
             + groups * ceil_div(out * bits, 32) * 4  // qzeros
             + groups * out * 2                       // scales (fp16)
             + in * 4;                                // g_idx
    case QuantMethod::kAwq:
      return in * ceil_div(out * bits, 32) * 4 + groups * ceil_div(out * bits, 32) * 4 + groups * out * 2;
    case QuantMethod::kBnb4: {
      const double blocks = ceil_div(n, static_cast<double>(s.bnb_blocksize));
      const double absmax = s.double_quant ? blocks + ceil_div(blocks, 256) * 4 + 256 * 4 + 4 : blocks * 4;
      return std::floor((n + 1) / 2) + absmax + 16 * 4;
    }
    case QuantMethod::kBnb8: return n + out * 4;
    case QuantMethod::kFp8:
      return n + (s.fp8_block.size() == 2
                      ? ceil_div(out, static_cast<double>(s.fp8_block[0])) *
                            ceil_div(in, static_cast<double>(s.fp8_block[1])) * 4
                      : 4);
    case QuantMethod::kMxfp4: return ceil_div(in, 2) * out + ceil_div(in, 32) * out;
    case QuantMethod::kGgufQ8_0: return ceil_div(in, 32) * out * 34;  // rows of 32-value blocks
    case QuantMethod::kGgufQ4_0: return ceil_div(in, 32) * out * 18;
  }
  return n * 2;
}

WeightBytes weight_bytes(const TensorTree& tree, std::int64_t vocab, DType compute,
                         const std::optional<QuantScheme>& scheme) {
  SizeOptions opt;
  opt.include_legacy_buffers = false;
  opt.bool_as_bit = false;
  opt.dtype = compute;
  opt.cast_floats = true;
  std::vector<const LinearLayer*> quantized_weight(tree.tensors.size(), nullptr);  // tensor → layer
  std::vector<LinearLayer> layers;
  if (scheme) {
    layers = linear_layers(tree, vocab);
    for (const auto& l : layers)
      if (is_quantized_by(l, tree.modules[static_cast<std::size_t>(l.module)].name, *scheme))
        quantized_weight[static_cast<std::size_t>(l.weight)] = &l;
  }
  WeightBytes out;
  for (std::size_t i = 0; i < tree.tensors.size(); ++i) {
    const TensorInfo& t = tree.tensors[i];
    if (!counted(t, opt)) continue;
    const LinearLayer* q = quantized_weight[i];
    if (q && !t.is_alias()) {
      const double b = quantized_layer_bytes(*q, *scheme);
      out.bytes += b;
      out.quantized_bytes += b;
      ++out.quantized_layers;
    } else {
      out.bytes += bits_to_bytes(tensor_bits(t, opt));
    }
  }
  return out;
}

}  // namespace memfit
