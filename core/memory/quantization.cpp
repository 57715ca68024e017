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

std::vector<std::string> skip_list(const Config& q) {
  for (const char* k : {"modules_to_not_convert", "llm_int8_skip_modules"})
    if (auto it = q.json().find(k); it != q.json().end() && it->is_array())
      if (auto v = q.string_list({k})) return *v;
  return {};
}

}  // namespace

std::string QuantScheme::describe() const {
  switch (method) {
    case QuantMethod::kGptq:
    case QuantMethod::kAwq: {
      const char* name = method == QuantMethod::kGptq ? "gptq" : "awq";
      return group_size > 0 ? fmt::format("{} {}-bit, group {}", name, bits, group_size)
                            : fmt::format("{} {}-bit, per channel", name, bits);
    }
    case QuantMethod::kBnb4:
      return fmt::format("bitsandbytes 4-bit{}", double_quant ? ", double quant" : "");
    case QuantMethod::kBnb8: return "bitsandbytes 8-bit (LLM.int8)";
    case QuantMethod::kFp8:
      return fp8_block.size() == 2
                 ? fmt::format("fp8, {}×{} block scales", fp8_block[0], fp8_block[1])
                 : std::string("fp8, per-tensor scale");
    case QuantMethod::kMxfp4: return "mxfp4";
    case QuantMethod::kGgufQ8_0: return "gguf q8_0";
    case QuantMethod::kGgufQ4_0: return "gguf q4_0";
  }
  return "?";
}

std::optional<QuantScheme> quant_scheme_from_config(const Config& config) {
  auto q = config.sub("quantization_config");
  if (!q) return std::nullopt;
  QuantScheme s;
  s.skip_modules = skip_list(*q);
  const std::string method = q->string_or({"quant_method"}, "");
  if (method == "gptq" || method == "awq") {
    s.method = method == "gptq" ? QuantMethod::kGptq : QuantMethod::kAwq;
    s.bits = static_cast<int>(q->dim_or({"bits", "w_bit"}, 4));
    if (s.bits > 8)
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: {} bits = {} (expected 2, 3, 4 or 8)", q->where(), method, s.bits));
    auto it = q->json().find("group_size");
    if (it == q->json().end()) it = q->json().find("q_group_size");
    s.group_size = 128;
    if (it != q->json().end() && it->is_number_integer()) {
      const auto g = it->get<std::int64_t>();
      s.group_size = g <= 0 ? -1 : g;
    }
  } else if (method == "bitsandbytes" || (method.empty() && (q->has("load_in_4bit") || q->has("load_in_8bit")))) {
    if (q->flag_or({"load_in_4bit"}, false)) {
      s.method = QuantMethod::kBnb4;
      s.bits = 4;
      s.double_quant = q->flag_or({"bnb_4bit_use_double_quant"}, false);
      if (auto cd = q->string_opt({"bnb_4bit_compute_dtype"})) s.compute_dtype = dtype_from_name(*cd);
    } else if (q->flag_or({"load_in_8bit"}, false)) {
      s.method = QuantMethod::kBnb8;
      s.bits = 8;
    } else {
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: bitsandbytes config without load_in_4bit or load_in_8bit", q->where()));
    }
  } else if (method == "fp8" || method == "fbgemm_fp8") {
    s.method = QuantMethod::kFp8;
    s.bits = 8;
    if (auto b = q->int_list({"weight_block_size"}); b && b->size() == 2 && (*b)[0] > 0 && (*b)[1] > 0)
      s.fp8_block = *b;
  } else if (method == "mxfp4") {
    s.method = QuantMethod::kMxfp4;
    s.bits = 4;
  } else {
    throw OptionMessage()
        .text(fmt::format("{}: quant_method '{}' is not sized by memfit (known: gptq, awq, "
                          "bitsandbytes, fp8, mxfp4); give ", q->where(), method))
        .option("dtype")
        .text(" to size the weights unquantized")
        .error(ErrorCode::kInvalidValue);
  }
  return s;
}

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
