// Tensors transformers keeps in float32 whatever the load dtype (memfit/model/keep_fp32.h).
//
// The rules are transformers' (modeling_utils `_get_dtype_plan`: `_keep_in_fp32_modules` in
// float16 loads, `_keep_in_fp32_modules_strict` in float16 and bfloat16 loads, entries matched as
// `(^|\.)ENTRY($|\.)`); the lists are each class's (DeepseekV3PreTrainedModel and its heirs,
// Ernie4_5_MoePreTrainedModel, NemotronHPreTrainedModel, GptOssPreTrainedModel,
// T5PreTrainedModel, DeepseekV32PreTrainedModel). The element counts come from the configs
// (fixtures and ../shared/reference/real-hub) and those lists; the stored forms from the real
// checkpoints' writers (DeepSeek's inference/model.py: Gate.bias float32; GLM-5 / DeepSeek-V3.2
// FP8 checkpoints: indexer.weights_proj a bf16 Linear with no weight_scale_inv).
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "memfit/memory/estimate.h"
#include "memfit/memory/stored_form.h"
#include "memfit/model/keep_fp32.h"
#include "memfit/model/model.h"
#include "support/model_of.h"
#include "support/reference.h"

using namespace memfit;

namespace {

const TensorInfo& tensor(const Model& m, const std::string& name) {
  const int i = m.tree.find_tensor(name);
  REQUIRE_MESSAGE(i >= 0, "no tensor " << name);
  return m.tree.tensors[static_cast<std::size_t>(i)];
}

double row_bytes(const Report& r, const std::string& dtype) {
  for (const auto& row : r.rows)
    if (row.dtype == dtype) return row.total_bytes;
  FAIL("no row " << dtype);
  return 0;
}

// What a half-precision row holds beyond half the float32 row: 2 more bytes per kept element.
struct HalfRowsExtra {
  double float16 = 0, bfloat16 = 0;
};
HalfRowsExtra half_rows_extra(const Model& m) {
  const Result<Report> r = estimate(m);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  const double f32 = row_bytes(*r, "float32");
  return {row_bytes(*r, "float16") - f32 / 2, row_bytes(*r, "bfloat16") - f32 / 2};
}

std::map<std::string, StoredTensor> stored_by_name(const Model& m) {
  std::map<std::string, StoredTensor> out;
  for (auto& t : stored_form(m).tensors) out[t.name] = t;
  return out;
}

// A DSA model with 4 layers (layer 3 MoE: first_k_dense_replace 3), 8 experts, FP8 blocks as
// DeepSeek-V3.2's config writes them.
const char* kDsaConfig = R"({
  "architectures": ["DeepseekV32ForCausalLM"], "model_type": "deepseek_v32",
  "vocab_size": 1024, "hidden_size": 256, "intermediate_size": 512, "moe_intermediate_size": 128,
  "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 4,
  "n_routed_experts": 8, "n_shared_experts": 1, "num_experts_per_tok": 2, "first_k_dense_replace": 3,
  "q_lora_rank": 128, "kv_lora_rank": 64, "qk_rope_head_dim": 32, "qk_nope_head_dim": 64,
  "v_head_dim": 64, "index_n_heads": 4, "index_head_dim": 128, "index_topk": 64,
  "torch_dtype": "bfloat16",
  "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                          "weight_block_size": [128, 128]}
})";

}  // namespace

TEST_CASE("keep_fp32: entries match as transformers' (^|\\.)ENTRY($|\\.) regex") {
  CHECK(keep_fp32_entry_matches("model.layers.1.mlp.gate.weight", "gate"));
  CHECK(keep_fp32_entry_matches("model.layers.1.mlp.gate.weight", "gate.weight"));
  CHECK(keep_fp32_entry_matches("model.norm.weight", "norm"));
  CHECK(keep_fp32_entry_matches("wo", "wo"));
  CHECK_FALSE(keep_fp32_entry_matches("model.layers.1.mlp.gate_proj.weight", "gate"));
  CHECK_FALSE(keep_fp32_entry_matches("model.layers.0.input_layernorm.weight", "norm"));
  CHECK_FALSE(keep_fp32_entry_matches("decoder.block.0.layer.2.DenseReluDense.wo_x", "wo"));
  CHECK_FALSE(keep_fp32_entry_matches("anything", ""));
  CHECK(kept_in_fp32(KeepFp32::kHalfLoads, DType::kBF16));
  CHECK(kept_in_fp32(KeepFp32::kHalfLoads, DType::kF16));
  CHECK_FALSE(kept_in_fp32(KeepFp32::kFloat16Loads, DType::kBF16));
  CHECK(kept_in_fp32(KeepFp32::kFloat16Loads, DType::kF16));
  CHECK_FALSE(kept_in_fp32(KeepFp32::kHalfLoads, DType::kI8));
}

TEST_CASE("keep_fp32: DeepSeek-V3's router bias loads and is stored in float32") {
  const Model m = test::model_of(test::fixture("configs/deepseek-ai--DeepSeek-V3.json"));
  const TensorInfo& bias = tensor(m, "model.layers.3.mlp.gate.e_score_correction_bias");
  CHECK(bias.keep_fp32 == KeepFp32::kHalfLoads);
  CHECK(bias.stored_fp32);
  CHECK(tensor(m, "model.layers.3.mlp.gate.weight").keep_fp32 == KeepFp32::kNo);
  // 61 layers, the first 3 dense: 58 routers × 256 experts = 14,848 values, 2 bytes more each in
  // both half-precision rows; so are the remote code's 61 per-layer rotary inv_freq buffers of
  // qk_rope_head_dim / 2 = 32 values (float32 in every RoPE module).
  const HalfRowsExtra extra = half_rows_extra(m);
  CHECK(extra.float16 == (58.0 * 256 + 61 * 32) * 2);
  CHECK(extra.bfloat16 == (58.0 * 256 + 61 * 32) * 2);
  // The checkpoint (FP8 weights, bf16 elsewhere) holds the bias as F32 [256].
  auto stored = stored_by_name(m);
  const StoredTensor& s = stored.at("model.layers.3.mlp.gate.e_score_correction_bias");
  CHECK(s.dtype == DType::kF32);
  CHECK(s.bytes == 256 * 4);
  CHECK(stored.at("model.layers.3.mlp.gate.weight").dtype == DType::kBF16);
}

TEST_CASE("keep_fp32: a GLM-4.5 MoE checkpoint stores the bias in bf16, the load keeps float32") {
  // Glm4MoePreTrainedModel inherits DeepseekV3PreTrainedModel's strict list; GLM's checkpoints
  // are written in bf16. 4 layers, first_k_dense_replace 1: 3 routers × 16 experts; and the
  // model-level rotary's inv_freq: head_dim 64 × partial_rotary_factor 0.5 (Glm4MoeConfig) / 2 = 16.
  const Model m = test::model_of(R"({
    "architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe", "vocab_size": 1024,
    "hidden_size": 256, "intermediate_size": 512, "moe_intermediate_size": 128,
    "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
    "n_routed_experts": 16, "n_shared_experts": 1, "num_experts_per_tok": 2,
    "first_k_dense_replace": 1, "torch_dtype": "bfloat16"})");
  const HalfRowsExtra extra = half_rows_extra(m);
  CHECK(extra.bfloat16 == (3.0 * 16 + 16) * 2);
  const StoredTensor s = stored_by_name(m).at("model.layers.1.mlp.gate.e_score_correction_bias");
  CHECK(s.dtype == DType::kBF16);
  CHECK(s.bytes == 16 * 2);
}

TEST_CASE("keep_fp32: the exact path (a checkpoint's headers) loads the kept tensors as the config's class does") {
  // The GLM-4.5 MoE layout above, its checkpoint in bf16 (the router biases too): the bfloat16
  // row is the stored bytes plus 2 more per bias value (3 routers × 16); no rotary buffer is stored.
  const char* config = R"({
    "architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe", "vocab_size": 1024,
    "hidden_size": 256, "intermediate_size": 512, "moe_intermediate_size": 128,
    "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
    "n_routed_experts": 16, "n_shared_experts": 1, "num_experts_per_tok": 2,
    "first_k_dense_replace": 1, "torch_dtype": "bfloat16"})";
  EstimateRequest req;
  req.config_text = config;
  for (const auto& t : stored_form(test::model_of(config)).tensors)
    req.checkpoint.push_back({t.name, t.dtype, t.shape, "model.safetensors"});
  req.dtypes = {"bfloat16"};
  const Result<Report> r = estimate(req);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  CHECK(r->source == "checkpoint");
  CHECK(r->rows.at(0).total_bytes == r->stored_bytes + 3.0 * 16 * 2);
}

TEST_CASE("keep_fp32: ERNIE-4.5 MoE's router and moe_statics (strict list)") {
  // ERNIE-4.5-21B-A3B's layout, shortened: 3 layers, moe_layer_start_index 1 → layers 1 and 2
  // MoE, 8 experts, hidden 256.
  const Model m = test::model_of(R"({
    "architectures": ["Ernie4_5_MoeForCausalLM"], "model_type": "ernie4_5_moe",
    "vocab_size": 1024, "hidden_size": 256, "intermediate_size": 512, "moe_intermediate_size": 128,
    "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2,
    "moe_num_experts": 8, "moe_num_shared_experts": 1, "moe_k": 2, "moe_layer_start_index": 1,
    "moe_layer_interval": 1, "torch_dtype": "bfloat16"})");
  CHECK(tensor(m, "model.layers.1.mlp.gate.weight").keep_fp32 == KeepFp32::kHalfLoads);
  CHECK(tensor(m, "model.layers.1.mlp.moe_statics.e_score_correction_bias").keep_fp32 == KeepFp32::kHalfLoads);
  CHECK(tensor(m, "model.layers.0.mlp.gate_proj.weight").keep_fp32 == KeepFp32::kNo);
  // Per MoE layer: gate [8, 256] + moe_statics [1, 8]; the rotary inv_freq: head_dim 64 / 2.
  const HalfRowsExtra extra = half_rows_extra(m);
  CHECK(extra.bfloat16 == (2.0 * (8 * 256 + 8) + 32) * 2);
  CHECK(extra.float16 == extra.bfloat16);
}

TEST_CASE("keep_fp32: _keep_in_fp32_modules holds only in float16 loads (T5's wo, gpt-oss's norms)") {
  // flan-t5-base: 12 encoder + 12 decoder blocks, wo [768, 2048] each.
  const Model t5 = test::model_of(test::fixture("configs/google--flan-t5-base.json"));
  const HalfRowsExtra t5_extra = half_rows_extra(t5);
  CHECK(t5_extra.float16 == 24.0 * 768 * 2048 * 2);
  CHECK(t5_extra.bfloat16 == 0);

  const auto ref = test::reference_dir();
  if (!ref) {
    test::skip_loudly("gpt-oss-20b real config");
    return;
  }
  // gpt-oss-20b: 24 layers × 2 RMSNorms + the final norm, hidden 2880 — in float16 loads only;
  // the rotary inv_freq (head_dim 64 / 2) in both.
  const Model oss = test::model_of(test::read_text(*ref + "/real-hub/openai--gpt-oss-20b/config.json"));
  const HalfRowsExtra oss_extra = half_rows_extra(oss);
  CHECK(oss_extra.float16 == ((24.0 * 2 + 1) * 2880 + 32) * 2);
  CHECK(oss_extra.bfloat16 == 32 * 2);
}

TEST_CASE("keep_fp32: DeepSeek-V3.2's indexer.weights_proj stays a bf16 Linear in the FP8 checkpoint") {
  const Model m = test::model_of(kDsaConfig);
  CHECK(tensor(m, "model.layers.0.self_attn.indexer.weights_proj.weight").keep_fp32 == KeepFp32::kFloat16Loads);
  const auto stored = stored_by_name(m);
  const StoredTensor& proj = stored.at("model.layers.0.self_attn.indexer.weights_proj.weight");
  CHECK(proj.dtype == DType::kBF16);
  CHECK(proj.shape == Shape{4, 256});
  CHECK_FALSE(stored.count("model.layers.0.self_attn.indexer.weights_proj.weight_scale_inv"));
  // The indexer's other Linears are converted like any.
  CHECK(stored.at("model.layers.0.self_attn.indexer.wk.weight").dtype == DType::kF8_E4M3);
  CHECK(stored.count("model.layers.0.self_attn.indexer.wk.weight_scale_inv"));
  // The router bias: F32 in DeepSeek's checkpoint.
  CHECK(stored.at("model.layers.3.mlp.gate.e_score_correction_bias").dtype == DType::kF32);
}

TEST_CASE("keep_fp32: accelerate's table knows no keep rule") {
  EstimateRequest req;
  req.config_text = test::fixture("configs/google--flan-t5-base.json");
  req.mode = Mode::kAccelerate;
  const Result<Report> r = estimate(req);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  CHECK(row_bytes(*r, "float16") * 2 == row_bytes(*r, "float32"));
}
