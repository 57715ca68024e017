#include "memfit/model/quant_config.h"

#include <fmt/format.h>

#include "memfit/error.h"
#include "memfit/option_error.h"

namespace memfit {
namespace {

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

}  // namespace memfit
