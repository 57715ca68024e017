#include "memfit/memory/quantization.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include <fmt/format.h>

#include "memfit/error.h"
#include "memfit/memory/module_sizes.h"
#include "memfit/option_error.h"

namespace memfit {
namespace {

double ceil_div(double a, double b) { return std::ceil(a / b); }
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

bool ends_with(const std::string& s, const char* suffix) {
  const std::size_t n = std::char_traits<char>::length(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// `pattern` with `*` (any run of characters) matches the start of `name` up to a dot or its end:
// transformers reads modules_to_not_convert entries as regexes matched at the start of the name
// (gpt-oss: "model.layers.*.self_attn").
bool glob_prefix(const char* name, const char* pattern) {
  if (*pattern == '\0') return *name == '\0' || *name == '.';
  if (*pattern == '*') {
    for (const char* n = name;; ++n) {
      if (glob_prefix(n, pattern + 1)) return true;
      if (*n == '\0') return false;
    }
  }
  if (*pattern == '.' && pattern[1] == '*') {  // regex ".*": the same as "*"
    if (glob_prefix(name, pattern + 1)) return true;
  }
  return *name == *pattern && glob_prefix(name + 1, pattern + 1);
}

bool name_matches(const std::string& name, const std::string& key) {
  if (key.empty()) return false;
  if (key.find('*') != std::string::npos) return glob_prefix(name.c_str(), key.c_str());
  if (name == key) return true;
  if (name.size() > key.size() && name.compare(name.size() - key.size() - 1, key.size() + 1, "." + key) == 0)
    return true;
  return (name + ".").find(key + ".") != std::string::npos;
}

bool skipped(const std::string& module_name, const QuantScheme& s) {
  for (const auto& k : s.skip_modules)
    if (name_matches(module_name, k)) return true;
  return false;
}

// transformers' bitsandbytes, fine-grained FP8 and MXFP4 quantizers add the class's
// _keep_in_fp32_modules (not the strict list) to modules_to_not_convert
// (HfQuantizer.get_modules_to_not_convert(model, skip_modules, keep_in_fp32_modules)), so such a
// Linear stays a float Linear in the checkpoint: DeepSeek-V3.2's indexer.weights_proj has no
// weight_scale_inv.
bool left_unconverted(const TensorInfo& weight, const QuantScheme& s) {
  const bool uses_keep_list = s.method == QuantMethod::kBnb4 || s.method == QuantMethod::kBnb8 ||
                              s.method == QuantMethod::kFp8 || s.method == QuantMethod::kMxfp4;
  return uses_keep_list && weight.keep_fp32 == KeepFp32::kFloat16Loads;
}

std::uint64_t dims_bytes(const std::int64_t* dims, int rank, DType dtype) {
  std::uint64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= static_cast<std::uint64_t>(dims[i]);
  return n * static_cast<std::uint64_t>(dtype_bits(dtype)) / 8;
}

// A piece of `q`'s layout: its dims after the expert count (when q has experts).
QuantPiece piece(const char* leaf, bool suffix, DType dtype, const QuantizedTensor& q,
                 std::initializer_list<std::int64_t> dims) {
  QuantPiece p;
  p.leaf = leaf;
  p.suffix = suffix;
  p.dtype = dtype;
  if (q.experts > 0) p.dims[p.rank++] = q.experts;
  for (auto d : dims) p.dims[p.rank++] = d;
  return p;
}

// bnb 4-bit and GGUF, whose stored pieces are not listed (quantized_layout).
double formula_bytes(std::int64_t in_, std::int64_t out_, const QuantScheme& s) {
  const double in = static_cast<double>(in_), out = static_cast<double>(out_), n = in * out;
  switch (s.method) {
    case QuantMethod::kBnb4: {
      const double blocks = ceil_div(n, static_cast<double>(s.bnb_blocksize));
      const double absmax = s.double_quant ? blocks + ceil_div(blocks, 256) * 4 + 256 * 4 + 4 : blocks * 4;
      return std::floor((n + 1) / 2) + absmax + 16 * 4;
    }
    case QuantMethod::kGgufQ8_0: return ceil_div(in, 32) * out * 34;  // rows of 32-value blocks
    case QuantMethod::kGgufQ4_0: return ceil_div(in, 32) * out * 18;
    default: return n * 2;
  }
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
  if (skipped(module_name, s)) return false;
  if ((s.method == QuantMethod::kGptq || s.method == QuantMethod::kAwq) && !layer.in_block) return false;
  return true;
}

std::vector<QuantizedTensor> quantized_tensors(const TensorTree& tree, std::int64_t vocab,
                                               const QuantScheme& s) {
  std::vector<QuantizedTensor> out;
  for (const auto& l : linear_layers(tree, vocab))
    if (is_quantized_by(l, tree.modules[static_cast<std::size_t>(l.module)].name, s) &&
        !left_unconverted(tree.tensors[static_cast<std::size_t>(l.weight)], s))
      out.push_back({l.weight, l.in, l.out, 0});
  if (s.method == QuantMethod::kMxfp4) {
    // Mxfp4GptOssExperts: gate_up_proj / down_proj [E, in, out] become blocks + scales; the
    // biases stay floats.
    for (const auto& m : tree.modules) {
      if (!ends_with(m.class_name, "Experts") || skipped(m.name, s)) continue;
      for (int i : m.params) {
        const TensorInfo& t = tree.tensors[static_cast<std::size_t>(i)];
        if (t.shape.size() == 3 && !t.is_alias() && !ends_with(t.name, "_bias"))
          out.push_back({i, t.shape[1], t.shape[2], t.shape[0]});
      }
    }
  }
  return out;
}

std::uint64_t stored_bytes(const Shape& shape, DType dtype) {
  return dims_bytes(shape.data(), static_cast<int>(shape.size()), dtype);
}

std::uint64_t QuantPiece::bytes() const { return dims_bytes(dims, rank, dtype); }

std::string QuantPiece::name(const std::string& tensor) const {
  if (suffix) return tensor + leaf;
  const auto dot = tensor.rfind('.');
  return dot == std::string::npos ? std::string(leaf) : tensor.substr(0, dot + 1) + leaf;
}

QuantLayout quantized_layout(const QuantizedTensor& q, const QuantScheme& s) {
  const std::int64_t in = q.in, out = q.out, bits = s.bits;
  const std::int64_t groups = s.group_size > 0 ? ceil_div(in, s.group_size) : 1;
  const std::int64_t packed_out = ceil_div(out * bits, 32);
  QuantLayout l;
  auto add = [&](const char* leaf, bool suffix, DType dtype, std::initializer_list<std::int64_t> dims) {
    l.pieces[l.count++] = piece(leaf, suffix, dtype, q, dims);
  };
  switch (s.method) {
    case QuantMethod::kGptq:  // AutoGPTQ's QuantLinear
      add("qweight", false, DType::kI32, {ceil_div(in * bits, 32), out});
      add("qzeros", false, DType::kI32, {groups, packed_out});
      add("scales", false, DType::kF16, {groups, out});
      add("g_idx", false, DType::kI32, {in});
      break;
    case QuantMethod::kAwq:  // AutoAWQ's WQLinear_GEMM
      add("qweight", false, DType::kI32, {in, packed_out});
      add("qzeros", false, DType::kI32, {groups, packed_out});
      add("scales", false, DType::kF16, {groups, out});
      break;
    case QuantMethod::kBnb8:  // bitsandbytes Linear8bitLt: Int8Params + SCB
      add("", true, DType::kI8, {out, in});
      add("SCB", false, DType::kF32, {out});
      break;
    case QuantMethod::kFp8:  // transformers' FP8Linear: a scalar scale without weight_block_size
      add("", true, DType::kF8_E4M3, {out, in});
      if (s.fp8_block.size() == 2)
        add("_scale_inv", true, DType::kF32, {ceil_div(out, s.fp8_block[0]), ceil_div(in, s.fp8_block[1])});
      else
        add("_scale_inv", true, DType::kF32, {});
      break;
    case QuantMethod::kMxfp4:  // 32 values per block: 16 bytes of nibbles + one E8M0 scale
      add("_blocks", true, DType::kU8, {out, ceil_div(in, 32), 16});
      add("_scales", true, DType::kU8, {out, ceil_div(in, 32)});
      break;
    case QuantMethod::kBnb4:
    case QuantMethod::kGgufQ8_0:
    case QuantMethod::kGgufQ4_0: break;
  }
  return l;
}

double quantized_tensor_bytes(const QuantizedTensor& q, const QuantScheme& s) {
  const QuantLayout layout = quantized_layout(q, s);
  if (layout.count == 0) return formula_bytes(q.in, q.out, s) * static_cast<double>(std::max<std::int64_t>(q.experts, 1));
  double bytes = 0;
  for (const auto& p : layout) bytes += static_cast<double>(p.bytes());
  return bytes;
}

double quantized_layer_bytes(const LinearLayer& l, const QuantScheme& s) {
  return quantized_tensor_bytes({l.weight, l.in, l.out, 0}, s);
}

WeightBytes weight_bytes(const TensorTree& tree, std::int64_t vocab, DType compute,
                         const std::optional<QuantScheme>& scheme) {
  SizeOptions opt;
  opt.include_legacy_buffers = false;
  opt.bool_as_bit = false;
  opt.dtype = compute;
  opt.cast_floats = true;
  opt.keep_fp32 = true;
  std::vector<QuantizedTensor> quantized;
  std::vector<const QuantizedTensor*> quantized_of(tree.tensors.size(), nullptr);  // by tensor
  if (scheme) {
    quantized = quantized_tensors(tree, vocab, *scheme);
    for (const auto& q : quantized) quantized_of[static_cast<std::size_t>(q.tensor)] = &q;
  }
  WeightBytes out;
  for (std::size_t i = 0; i < tree.tensors.size(); ++i) {
    const TensorInfo& t = tree.tensors[i];
    if (!counted(t, opt)) continue;
    const QuantizedTensor* q = quantized_of[i];
    if (q && !t.is_alias()) {
      const double b = quantized_tensor_bytes(*q, *scheme);
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
