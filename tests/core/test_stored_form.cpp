// The stored form of a checkpoint (core/include/memfit/memory/stored_form.h): names, dtypes,
// shapes and bytes of what a Hub repo holds, from its config alone.
//
// Expected layouts are the quantizers' own modules:
//   transformers integrations/mxfp4.py Mxfp4GptOssExperts: gate_up_proj_blocks uint8
//     [E, 2·intermediate, hidden/32, 16], gate_up_proj_scales uint8 [E, 2·intermediate, hidden/32],
//     down_proj_blocks [E, hidden, intermediate/32, 16], down_proj_scales [E, hidden, intermediate/32]
//     for GptOssExperts' gate_up_proj [E, hidden, 2·intermediate] and down_proj [E, intermediate, hidden]
//   transformers integrations/finegrained_fp8.py FP8Linear: weight float8_e4m3fn [out, in],
//     weight_scale_inv float32 [⌈out/b0⌉, ⌈in/b1⌉]
//   AutoGPTQ QuantLinear / AutoAWQ WQLinear_GEMM: see test_inference_quant.cpp
// and the real gpt-oss-20b index (../shared/reference/real-hub), whose total_size is the golden.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "memfit/memory/checkpoint_validation.h"
#include "memfit/memory/quantization.h"
#include "memfit/memory/stored_form.h"
#include "memfit/model/tree_builder.h"
#include "support/parity.h"
#include "support/reference.h"

using namespace memfit;

namespace {

QuantScheme scheme_of(const std::string& quantization_config) {
  Config c(Config::parse(R"({"quantization_config": )" + quantization_config + "}", "config.json"), "config.json");
  auto s = quant_scheme_from_config(c);
  REQUIRE(s.has_value());
  return *s;
}

std::map<std::string, StoredTensor> stored_by_name(const TensorTree& tree, DType dtype, const QuantScheme& s,
                                                   std::int64_t vocab) {
  std::map<std::string, StoredTensor> out;
  for (const auto& t : stored_form(tree, dtype, s, vocab)) out[t.name] = t;
  return out;
}

void linear(TreeBuilder& b, const char* name, std::int64_t in, std::int64_t out, bool bias) {
  auto s = b.module(name, "Linear");
  b.param("weight", {out, in});
  if (bias) b.param("bias", {out});
}

struct LinearSpec {
  const char* name;
  std::int64_t in, out;
  bool bias;
};

// One decoder block `layers.0` of Linear layers (then a norm of width `norm` when > 0), and an
// output head `lm_head` [vocab, norm] when vocab > 0.
TensorTree block_tree(const std::vector<LinearSpec>& linears, std::int64_t norm, std::int64_t vocab) {
  TreeBuilder b("M");
  {
    auto m = b.module("layers", "ModuleList");
    auto l = b.module("0", "Layer");
    for (const auto& spec : linears) linear(b, spec.name, spec.in, spec.out, spec.bias);
    if (norm > 0) {
      auto n = b.module("norm", "RMSNorm");
      b.param("weight", {norm});
    }
  }
  if (vocab > 0) linear(b, "lm_head", norm, vocab, false);
  return b.finish();
}

struct GptOssDims {
  std::int64_t vocab, hidden, intermediate, layers, heads, kv_heads, head_dim, experts;
};

// GptOssForCausalLM as transformers' modeling_gpt_oss.py registers it (the gpt_oss family lives
// in core/model/arch once it exists; this hand-built tree checks only the MXFP4 stored form).
TensorTree gpt_oss_tree(const GptOssDims& d) {
  TreeBuilder b("GptOssForCausalLM");
  {
    auto model = b.module("model", "GptOssModel");
    {
      auto e = b.module("embed_tokens", "Embedding");
      b.param("weight", {d.vocab, d.hidden});
    }
    {
    auto layers = b.module("layers", "ModuleList");
    for (std::int64_t i = 0; i < d.layers; ++i) {
      auto layer = b.module(std::to_string(i), "GptOssDecoderLayer");
      {
        auto attn = b.module("self_attn", "GptOssAttention");
        linear(b, "q_proj", d.hidden, d.heads * d.head_dim, true);
        linear(b, "k_proj", d.hidden, d.kv_heads * d.head_dim, true);
        linear(b, "v_proj", d.hidden, d.kv_heads * d.head_dim, true);
        linear(b, "o_proj", d.heads * d.head_dim, d.hidden, true);
        b.param("sinks", {d.heads});
      }
      {
        auto mlp = b.module("mlp", "GptOssMLP");
        {
          auto router = b.module("router", "GptOssTopKRouter");
          b.param("weight", {d.experts, d.hidden});
          b.param("bias", {d.experts});
        }
        auto experts = b.module("experts", "GptOssExperts");
        b.param("gate_up_proj", {d.experts, d.hidden, 2 * d.intermediate});
        b.param("gate_up_proj_bias", {d.experts, 2 * d.intermediate});
        b.param("down_proj", {d.experts, d.intermediate, d.hidden});
        b.param("down_proj_bias", {d.experts, d.hidden});
      }
      {
        auto n = b.module("input_layernorm", "GptOssRMSNorm");
        b.param("weight", {d.hidden});
      }
      auto n = b.module("post_attention_layernorm", "GptOssRMSNorm");
      b.param("weight", {d.hidden});
    }
    }
    auto norm = b.module("norm", "GptOssRMSNorm");
    b.param("weight", {d.hidden});
  }
  linear(b, "lm_head", d.hidden, d.vocab, false);
  return b.finish();
}

}  // namespace

TEST_CASE("stored form: MXFP4 experts become _blocks and _scales; modules_to_not_convert stays bf16") {
  const GptOssDims d{100, 64, 32, 1, 2, 1, 32, 4};
  TensorTree tree = gpt_oss_tree(d);
  const QuantScheme mx = scheme_of(R"({"quant_method": "mxfp4", "modules_to_not_convert":
      ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]})");
  auto by_name = stored_by_name(tree, DType::kBF16, mx, d.vocab);
  const std::string e = "model.layers.0.mlp.experts.";
  REQUIRE(by_name.count(e + "gate_up_proj_blocks"));
  CHECK_FALSE(by_name.count(e + "gate_up_proj"));
  // gate_up_proj [4, 64, 64] (in 64, out 64): blocks [4, 64, 2, 16], scales [4, 64, 2].
  CHECK(by_name[e + "gate_up_proj_blocks"].shape == Shape{4, 64, 2, 16});
  CHECK(by_name[e + "gate_up_proj_blocks"].dtype == DType::kU8);
  CHECK(by_name[e + "gate_up_proj_scales"].shape == Shape{4, 64, 2});
  // down_proj [4, 32, 64] (in 32, out 64): blocks [4, 64, 1, 16], scales [4, 64, 1].
  CHECK(by_name[e + "down_proj_blocks"].shape == Shape{4, 64, 1, 16});
  CHECK(by_name[e + "down_proj_scales"].bytes == 4 * 64 * 1);
  CHECK(by_name[e + "gate_up_proj_bias"].dtype == DType::kBF16);
  CHECK(by_name["model.layers.0.self_attn.q_proj.weight"].dtype == DType::kBF16);
  CHECK(by_name["model.layers.0.mlp.router.weight"].dtype == DType::kBF16);
  CHECK(by_name.size() == tree.tensors.size() + 2);  // two expert weights → two pieces each
}

TEST_CASE("stored form: gpt-oss-20b's MXFP4 names and total_size equal the real index") {
  const auto ref = test::reference_dir();
  const std::string dir = ref ? *ref + "/real-hub/openai--gpt-oss-20b" : "";
  if (!ref || !test::file_exists(dir + "/model.safetensors.index.json"))
    return test::skip_loudly("gpt-oss-20b index");
  const Config config(Config::parse(test::read_text(dir + "/config.json"), "config.json"), "config.json");
  const std::optional<QuantScheme> scheme = quant_scheme_from_config(config);
  REQUIRE(scheme.has_value());
  std::string how;
  const DType dtype = stored_float_dtype(config, scheme, &how);
  CHECK(dtype == DType::kBF16);  // no torch_dtype: Mxfp4HfQuantizer's default
  auto dim = [&](const char* k) { return config.json().at(k).get<std::int64_t>(); };
  const GptOssDims d{dim("vocab_size"), dim("hidden_size"), dim("intermediate_size"), dim("num_hidden_layers"),
                     dim("num_attention_heads"), dim("num_key_value_heads"), dim("head_dim"), dim("num_local_experts")};
  const TensorTree tree = gpt_oss_tree(d);
  std::vector<CheckpointTensor> index;
  const test::OJson j = test::read_reference_json(dir + "/model.safetensors.index.json");
  for (const auto& entry : j.at("weight_map").items()) index.push_back({entry.key(), DType::kF32, {}, ""});
  std::vector<ExpectedTensor> expected;
  std::uint64_t total = 0;
  for (const auto& t : stored_form(tree, dtype, scheme, d.vocab)) {
    expected.push_back({t.name, t.shape, t.dtype});
    total += t.bytes;
  }
  const TreeComparison c = compare_state_dict(expected, {}, index, std::nullopt, /*check_shapes=*/false);
  CHECK_MESSAGE(c.missing.empty(), c.missing.size() << " missing, e.g. " << (c.missing.empty() ? "" : c.missing[0]));
  CHECK_MESSAGE(c.unexpected.empty(), c.unexpected.size() << " unexpected, e.g. " << (c.unexpected.empty() ? "" : c.unexpected[0]));
  CHECK(total == j.at("metadata").at("total_size").get<std::uint64_t>());
}

TEST_CASE("stored form: fp8 block scales (DeepSeek-V3 / MiniMax style), skipped modules, output head") {
  const TensorTree tree = block_tree({{"kv_b_proj", 512, 32768, false}, {"gate", 512, 8, false}}, 512, 1000);
  const QuantScheme fp8 = scheme_of(R"({"quant_method": "fp8", "weight_block_size": [128, 128],
                                        "modules_to_not_convert": ["gate"]})");
  auto by_name = stored_by_name(tree, DType::kBF16, fp8, 1000);
  CHECK(by_name.size() == 5);
  CHECK(by_name["layers.0.kv_b_proj.weight"].dtype == DType::kF8_E4M3);
  CHECK(by_name["layers.0.kv_b_proj.weight_scale_inv"].shape == Shape{256, 4});
  CHECK(by_name["layers.0.kv_b_proj.weight_scale_inv"].dtype == DType::kF32);
  CHECK(by_name["layers.0.gate.weight"].dtype == DType::kBF16);
  CHECK(by_name["lm_head.weight"].dtype == DType::kBF16);  // the output head is never converted
  CHECK(by_name["layers.0.norm.weight"].bytes == 1024);
}

TEST_CASE("stored form: GPTQ and AWQ pieces replace the Linear's weight") {
  const TensorTree tree = block_tree({{"up_proj", 4096, 11008, true}}, 0, 0);
  auto gptq = stored_by_name(tree, DType::kF16, scheme_of(R"({"quant_method": "gptq", "bits": 4, "group_size": 128})"), 0);
  CHECK_FALSE(gptq.count("layers.0.up_proj.weight"));
  CHECK(gptq["layers.0.up_proj.qweight"].shape == Shape{512, 11008});
  CHECK(gptq["layers.0.up_proj.qzeros"].shape == Shape{32, 1376});
  CHECK(gptq["layers.0.up_proj.scales"].shape == Shape{32, 11008});
  CHECK(gptq["layers.0.up_proj.g_idx"].shape == Shape{4096});
  CHECK(gptq["layers.0.up_proj.bias"].dtype == DType::kF16);
  auto awq = stored_by_name(tree, DType::kF16, scheme_of(R"({"quant_method": "awq", "bits": 4, "group_size": 128})"), 0);
  CHECK(awq["layers.0.up_proj.qweight"].shape == Shape{4096, 1376});
  CHECK_FALSE(awq.count("layers.0.up_proj.g_idx"));
}

TEST_CASE("stored form: the float dtype when config.json names none") {
  auto dtype_of = [](const std::string& json, std::optional<QuantScheme> s) {
    std::string how;
    return stored_float_dtype(Config(Config::parse(json, "config.json"), "config.json"), s, &how);
  };
  CHECK(dtype_of(R"({"torch_dtype": "bfloat16"})", std::nullopt) == DType::kBF16);
  CHECK(dtype_of(R"({"dtype": "float16"})", std::nullopt) == DType::kF16);
  CHECK(dtype_of(R"({"text_config": {"dtype": "bfloat16"}})", std::nullopt) == DType::kBF16);
  CHECK(dtype_of("{}", std::nullopt) == DType::kF32);
  CHECK(dtype_of("{}", scheme_of(R"({"quant_method": "fp8"})")) == DType::kF32);  // FineGrainedFP8HfQuantizer
}

TEST_CASE("ignored on load: rotary inv_freq, multi-token-prediction layers, mtp.*") {
  const Config v3(Config::parse(R"({"num_hidden_layers": 61, "num_nextn_predict_layers": 1})", "config.json"),
                  "config.json");
  const IgnoredOnLoad ignore(v3);
  CHECK(ignore.matches("model.layers.61.eh_proj.weight"));  // DeepseekV3: r"model\.layers\.61.*"
  CHECK_FALSE(ignore.matches("model.layers.60.mlp.gate.weight"));
  CHECK_FALSE(ignore.matches("model.layers.62.mlp.gate.weight"));
  CHECK(ignore.matches("model.layers.3.self_attn.rotary_emb.inv_freq"));
  CHECK(ignore.matches("mtp.fc.weight"));
  const IgnoredOnLoad plain(Config(Config::parse(R"({"num_hidden_layers": 61})", "config.json"), "config.json"));
  CHECK_FALSE(plain.matches("model.layers.61.eh_proj.weight"));
}

TEST_CASE("stored form: DeepSeek-V3's multi-token-prediction layer 61, sized for total_size") {
  // Layer 61 of the Hub checkpoint (names as vLLM's deepseek_mtp.py loads them): a decoder layer
  // plus embed_tokens, enorm, hnorm, eh_proj, shared_head.norm and shared_head.head.
  EstimateRequest req;
  req.config_text = test::fixture("configs/deepseek-ai--DeepSeek-V3.json");
  req.name = "deepseek-ai/DeepSeek-V3";
  const Result<Model> model = build_model(req);
  REQUIRE_MESSAGE(model.ok(), model.error().message());
  std::map<std::string, StoredTensor> mtp;
  for (const auto& t : mtp_stored_form(*model)) mtp[t.name] = t;
  for (const char* leaf : {"embed_tokens.weight", "enorm.weight", "hnorm.weight", "eh_proj.weight",
                           "shared_head.norm.weight", "shared_head.head.weight", "input_layernorm.weight",
                           "self_attn.q_a_proj.weight", "mlp.experts.255.down_proj.weight", "mlp.gate.weight"})
    CHECK_MESSAGE(mtp.count(std::string("model.layers.61.") + leaf), leaf);
  CHECK_FALSE(mtp.count("model.layers.60.input_layernorm.weight"));
  // hidden 7168, 128 × 128 blocks: eh_proj [7168, 14336] in e4m3 with [56, 112] scales.
  CHECK(mtp["model.layers.61.eh_proj.weight"].dtype == DType::kF8_E4M3);
  CHECK(mtp["model.layers.61.eh_proj.weight_scale_inv"].shape == Shape{56, 112});
  CHECK(mtp["model.layers.61.shared_head.head.weight"].dtype == DType::kBF16);
  CHECK(mtp["model.layers.61.embed_tokens.weight"].shape == Shape{129280, 7168});
  // validate: an index naming layer 61 lists it as ignored, with its bytes counted.
  std::vector<CheckpointTensor> names;
  for (const auto& [name, t] : mtp) names.push_back({name, DType::kF32, {}, ""});
  const CheckpointValidation v = validate_checkpoint(*model, names, false, std::nullopt);
  CHECK(v.ignored.size() == mtp.size());
  CHECK(v.unexpected.empty());
  CHECK(v.notes.empty());  // every ignored name sized
}
