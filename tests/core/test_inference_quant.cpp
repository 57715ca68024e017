// Quantized weights from quantization_config (core/include/memfit/memory/quantization.h).
//
// Per-layer sizes are hand-computed from the libraries' tensor layouts:
//   AutoGPTQ QuantLinear: qweight int32 [in/32·bits, out], qzeros int32 [⌈in/g⌉, out/32·bits],
//                         scales fp16 [⌈in/g⌉, out], g_idx int32 [in]
//   AutoAWQ WQLinear_GEMM: qweight int32 [in, out/(32/bits)], qzeros int32 [⌈in/g⌉, out/(32/bits)],
//                         scales fp16 [⌈in/g⌉, out]
//   bitsandbytes quantize_4bit: packed uint8 [(n+1)//2, 1], absmax fp32 per blocksize 64,
//                         compress_statistics: uint8 absmax + quantize_blockwise(blocksize=256)
//                         state2 (fp32 absmax per 256, 256-entry fp32 code) + fp32 offset; NF4 code 16 fp32
//   bitsandbytes Int8Params: int8 [out, in] + SCB fp32 [out]
//   fp8 (DeepSeek-V3's weight_block_size [128, 128]): e4m3 [out, in] + fp32 weight_scale_inv
//                         [⌈out/128⌉, ⌈in/128⌉]
#include <doctest/doctest.h>

#include <string>

#include "memfit/memory/estimate.h"
#include "memfit/memory/quantization.h"
#include "memfit/model/config.h"
#include "support/reference.h"

using namespace memfit;

namespace {

LinearLayer linear(std::int64_t in, std::int64_t out) {
  LinearLayer l;
  l.in = in;
  l.out = out;
  l.in_block = true;
  return l;
}

QuantScheme scheme_of(const std::string& quantization_config) {
  Config c(Config::parse(R"({"quantization_config": )" + quantization_config + "}", "config.json"), "config.json");
  auto s = quant_scheme_from_config(c);
  REQUIRE(s.has_value());
  return *s;
}

}  // namespace

TEST_CASE("GPTQ 4-bit, group 128: a 4096 × 4096 projection") {
  const QuantScheme s = scheme_of(R"({"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": false})");
  // qweight 512 × 4096 × 4 = 8,388,608; qzeros 32 × 512 × 4 = 65,536; scales 32 × 4096 × 2 =
  // 262,144; g_idx 4096 × 4 = 16,384 → 8,732,672.
  CHECK(quantized_layer_bytes(linear(4096, 4096), s) == 8732672.0);
  CHECK(s.describe() == "gptq 4-bit, group 128");
  // group_size -1: one group per column. qweight 8,388,608 + qzeros 512 × 4 + scales 4096 × 2 + g_idx.
  const QuantScheme per_channel = scheme_of(R"({"quant_method": "gptq", "bits": 4, "group_size": -1})");
  CHECK(quantized_layer_bytes(linear(4096, 4096), per_channel) == 8388608.0 + 2048 + 8192 + 16384);
}

TEST_CASE("AWQ 4-bit, group 128: a down projection 11008 → 4096") {
  const QuantScheme s = scheme_of(R"({"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm"})");
  // in 11008, out 4096: qweight 11008 × 512 × 4 = 22,544,384; groups 86: qzeros 86 × 512 × 4 =
  // 176,128; scales 86 × 4096 × 2 = 704,512 → 23,425,024 (no g_idx).
  CHECK(quantized_layer_bytes(linear(11008, 4096), s) == 23425024.0);
}

TEST_CASE("bitsandbytes 4-bit (NF4), with and without double quantization; 8-bit") {
  QuantScheme nf4 = scheme_of(R"({"quant_method": "bitsandbytes", "load_in_4bit": true,
                                   "bnb_4bit_quant_type": "nf4", "bnb_4bit_compute_dtype": "bfloat16"})");
  CHECK(nf4.compute_dtype == DType::kBF16);
  // n = 16,777,216: packed 8,388,608 + absmax 262,144 × 4 + quant_map 64 = 9,437,248.
  CHECK(quantized_layer_bytes(linear(4096, 4096), nf4) == 9437248.0);
  nf4.double_quant = true;
  // 8,388,608 + 262,144 (uint8 absmax) + 1,024 × 4 (absmax2) + 1,024 (code) + 4 (offset) + 64.
  CHECK(quantized_layer_bytes(linear(4096, 4096), nf4) == 8655940.0);
  const QuantScheme int8 = scheme_of(R"({"quant_method": "bitsandbytes", "load_in_8bit": true})");
  // 16,777,216 int8 + 4096 × 4 (SCB).
  CHECK(quantized_layer_bytes(linear(4096, 4096), int8) == 16793600.0);
}

TEST_CASE("fp8 with 128 × 128 block scales (DeepSeek-V3) and MXFP4") {
  Config v3(Config::parse(test::fixture("configs/deepseek-ai--DeepSeek-V3.json"), "config.json"), "config.json");
  const auto s = quant_scheme_from_config(v3);
  REQUIRE(s.has_value());
  CHECK(s->method == QuantMethod::kFp8);
  // kv_b_proj of V3: [32768, 512] → 16,777,216 + ⌈32768/128⌉ × ⌈512/128⌉ × 4 = 16,777,216 + 4,096.
  CHECK(quantized_layer_bytes(linear(512, 32768), *s) == 16781312.0);
  const QuantScheme mx = scheme_of(R"({"quant_method": "mxfp4", "modules_to_not_convert": ["self_attn", "router", "lm_head"]})");
  // 2880 × 2880: 4-bit blocks 2880 × 1440 + one E8M0 byte per 32 → 2880 × 90.
  CHECK(quantized_layer_bytes(linear(2880, 2880), mx) == 2880.0 * 1440 + 2880.0 * 90);
  LinearLayer attn = linear(2880, 2880);
  CHECK_FALSE(is_quantized_by(attn, "model.layers.0.self_attn.q_proj", mx));
  CHECK(is_quantized_by(attn, "model.layers.0.mlp.experts.0.up_proj", mx));
}

TEST_CASE("a whole model: only the blocks' linear layers are quantized") {
  EstimateRequest req;
  req.config_text = test::fixture("configs/meta-llama--Llama-2-7b-hf.json");
  req.name = "llama";
  auto tree = build_tree(req);
  REQUIRE(tree.ok());
  const QuantScheme gptq = scheme_of(R"({"quant_method": "gptq", "bits": 4, "group_size": 128})");
  const WeightBytes w = weight_bytes(*tree, 32000, DType::kF16, gptq);
  CHECK(w.quantized_layers == 32 * 7);
  // Per layer: q,k,v,o 4 × 8,732,672; gate, up (in 4096, out 11008): qweight 512 × 11008 × 4 +
  // qzeros 32 × 1376 × 4 + scales 32 × 11008 × 2 + g_idx 16,384 = 22,544,384 + 176,128 + 704,512 +
  // 16,384 = 23,441,408 each; down (in 11008, out 4096): 1376 × 4096 × 4 + 86 × 512 × 4 +
  // 86 × 4096 × 2 + 11008 × 4 = 22,544,384 + 176,128 + 704,512 + 44,032 = 23,469,056.
  const double per_layer = 4 * 8732672.0 + 2 * 23441408.0 + 23469056.0;
  CHECK(w.quantized_bytes == 32 * per_layer);
  // Everything else stays fp16: embeddings and lm_head 2 × 32000 × 4096, norms 65 × 4096; the
  // model-level rotary inv_freq buffer (head_dim / 2 = 64 values) stays float32.
  CHECK(w.bytes == w.quantized_bytes + 2.0 * (2 * 32000 * 4096 + 65 * 4096) + 4.0 * 64);
}

TEST_CASE("unknown quant_method is an error that says what to do") {
  Config c(Config::parse(R"({"quantization_config": {"quant_method": "hqq"}})", "config.json"), "config.json");
  try {
    quant_scheme_from_config(c);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.message().find("'hqq'") != std::string::npos);
    // It names the dtype option (the CLI prints it as --dtype), never a flag.
    CHECK(e.message().find("give dtype to size the weights unquantized") != std::string::npos);
    CHECK(e.message().find("--") == std::string::npos);
    REQUIRE(e.options().size() == 1);
    CHECK(e.message().substr(e.options()[0].begin, e.options()[0].size) == "dtype");
  }
}
