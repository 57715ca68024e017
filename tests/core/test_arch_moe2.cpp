// Issue 16's plain decoders and DeepSeek-style MoE families: published parameter counts.
//
// Each case writes the public config.json's values of the repo it names (and reads the real
// MiniMax-M2.5 config in ../shared/reference/real-hub), then checks memfit's count against the
// figure its model card or the Hub publishes — rounded or truncated as that figure is written —
// plus the layout details the count cannot see (tensor shapes, which layers are MoE, per-layer
// attention). Cards count "active" parameters two ways: with the embeddings (Kimi K2, Phi-3.5-MoE,
// OLMoE, ERNIE 4.5) or without them (the GLM and MiniMax cards); each case says which.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "memfit/model/model.h"
#include "memfit/model/model_dims.h"
#include "support/model_of.h"
#include "support/reference.h"

using namespace memfit;

namespace {

using test::model_of;

double in_billions(double n) { return n / 1e9; }
double rounded(double n, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(in_billions(n) * scale) / scale;
}

Shape shape_of(const TensorTree& t, const std::string& name) {
  const int i = t.find_tensor(name);
  REQUIRE_MESSAGE(i >= 0, "no tensor " << name);
  return t.tensors[static_cast<std::size_t>(i)].shape;
}

// Input and output embeddings, counted once when tied.
double embeddings(const TensorTree& t) {
  double n = 0;
  for (const char* name : {"model.embed_tokens.weight", "lm_head.weight"}) {
    const int i = t.find_tensor(name);
    if (i >= 0 && !t.tensors[static_cast<std::size_t>(i)].is_alias())
      n += static_cast<double>(t.tensors[static_cast<std::size_t>(i)].numel);
  }
  return n;
}

double active(const Model& m) {
  REQUIRE(m.dims.get());
  return active_parameters(m.tree, *m.dims.get());
}

const ModelDims& dims(const Model& m) {
  REQUIRE(m.dims.get());
  return *m.dims.get();
}

}  // namespace

TEST_CASE("granite: ibm-granite/granite-3.3-8b-instruct gives the Hub's 8.17B") {
  const Model m = model_of(R"({"model_type": "granite", "architectures": ["GraniteForCausalLM"],
      "vocab_size": 49159, "hidden_size": 4096, "intermediate_size": 12800, "num_hidden_layers": 40,
      "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072,
      "tie_word_embeddings": true, "attention_bias": false, "mlp_bias": false,
      "embedding_multiplier": 12.0, "attention_multiplier": 0.0078125, "residual_multiplier": 0.22,
      "logits_scaling": 16.0, "rope_theta": 10000000.0, "torch_dtype": "bfloat16"})");
  CHECK(m.class_name() == "GraniteForCausalLM");
  CHECK(rounded(m.parameters, 2) == 8.17);
  CHECK(shape_of(m.tree, "model.layers.39.self_attn.k_proj.weight") == Shape{1024, 4096});
  CHECK(m.tree.find_tensor("model.layers.0.self_attn.rotary_emb.inv_freq") < 0);
}

TEST_CASE("granitemoe: ibm-granite/granite-3.0-1b-a400m-base gives 1.33B total, 400M active") {
  const Model m = model_of(R"({"model_type": "granitemoe", "architectures": ["GraniteMoeForCausalLM"],
      "vocab_size": 49155, "hidden_size": 1024, "intermediate_size": 512, "num_hidden_layers": 24,
      "num_attention_heads": 16, "num_key_value_heads": 8, "num_local_experts": 32,
      "num_experts_per_tok": 8, "max_position_embeddings": 4096, "tie_word_embeddings": true,
      "torch_dtype": "bfloat16"})");
  CHECK(rounded(m.parameters, 2) == 1.33);
  // The card's "400M active" (0.43B: attention, embeddings and 8 of 32 experts).
  CHECK(in_billions(active(m)) >= 0.40);
  CHECK(in_billions(active(m)) < 0.45);
  CHECK(shape_of(m.tree, "model.layers.0.block_sparse_moe.input_linear.weight") == Shape{32, 1024, 1024});
  CHECK(shape_of(m.tree, "model.layers.0.block_sparse_moe.output_linear.weight") == Shape{32, 1024, 512});
  CHECK(shape_of(m.tree, "model.layers.0.block_sparse_moe.router.layer.weight") == Shape{32, 1024});
}

TEST_CASE("olmo2: allenai/OLMo-2-1124-7B gives the Hub's 7.3B; norms after each block") {
  const Model m = model_of(R"({"model_type": "olmo2", "architectures": ["Olmo2ForCausalLM"],
      "vocab_size": 100352, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
      "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 4096,
      "tie_word_embeddings": false, "rms_norm_eps": 1e-06, "torch_dtype": "float32"})");
  CHECK(rounded(m.parameters, 1) == 7.3);
  CHECK(m.tree.find_module("model.layers.0.input_layernorm") < 0);
  CHECK(shape_of(m.tree, "model.layers.0.post_feedforward_layernorm.weight") == Shape{4096});
  CHECK(shape_of(m.tree, "model.layers.0.self_attn.q_norm.weight") == Shape{4096});
}

TEST_CASE("olmoe: allenai/OLMoE-1B-7B-0924 gives 6.92B total, 1.28B active") {
  const Model m = model_of(R"({"model_type": "olmoe", "architectures": ["OlmoeForCausalLM"],
      "vocab_size": 50304, "hidden_size": 2048, "intermediate_size": 1024, "num_hidden_layers": 16,
      "num_attention_heads": 16, "num_key_value_heads": 16, "num_experts": 64,
      "num_experts_per_tok": 8, "max_position_embeddings": 4096, "tie_word_embeddings": false,
      "torch_dtype": "bfloat16"})");
  CHECK(rounded(m.parameters, 2) == 6.92);
  CHECK(rounded(active(m), 2) == 1.28);
  CHECK(dims(m).experts == 64);
  CHECK(shape_of(m.tree, "model.layers.15.mlp.experts.63.down_proj.weight") == Shape{2048, 1024});
  CHECK(shape_of(m.tree, "model.layers.0.self_attn.k_norm.weight") == Shape{2048});
}

TEST_CASE("cohere: CohereForAI/c4ai-command-r-v01 gives 35B; a parallel block") {
  const Model m = model_of(R"({"model_type": "cohere", "architectures": ["CohereForCausalLM"],
      "vocab_size": 256000, "hidden_size": 8192, "intermediate_size": 22528, "num_hidden_layers": 40,
      "num_attention_heads": 64, "num_key_value_heads": 64, "max_position_embeddings": 8192,
      "logit_scale": 0.0625, "use_qk_norm": false, "layer_norm_eps": 1e-05,
      "torch_dtype": "float16"})");
  CHECK(m.class_name() == "CohereForCausalLM");
  CHECK(rounded(m.parameters, 0) == 35);
  CHECK(m.tree.tensors[static_cast<std::size_t>(m.tree.find_tensor("lm_head.weight"))].is_alias());
  CHECK(m.tree.find_module("model.layers.0.post_attention_layernorm") < 0);
}

TEST_CASE("cohere: use_qk_norm gives Command R+'s [heads, head_dim] q/k LayerNorms") {
  const Model m = model_of(R"({"model_type": "cohere", "architectures": ["CohereForCausalLM"],
      "vocab_size": 256000, "hidden_size": 12288, "intermediate_size": 33792, "num_hidden_layers": 2,
      "num_attention_heads": 96, "num_key_value_heads": 8, "use_qk_norm": true})");
  CHECK(shape_of(m.tree, "model.layers.0.self_attn.q_norm.weight") == Shape{96, 128});
  CHECK(shape_of(m.tree, "model.layers.0.self_attn.k_norm.weight") == Shape{8, 128});
}

TEST_CASE("cohere2: CohereLabs/c4ai-command-r7b-12-2024 gives 8.03B; 3 sliding layers, then a full one without RoPE") {
  const Model m = model_of(R"({"model_type": "cohere2", "architectures": ["Cohere2ForCausalLM"],
      "vocab_size": 256000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
      "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 8192,
      "sliding_window": 4096, "sliding_window_pattern": 4, "rope_theta": 50000,
      "layer_norm_eps": 1e-05, "torch_dtype": "bfloat16"})");
  CHECK(rounded(m.parameters, 2) == 8.03);
  const ModelDims& d = dims(m);
  CHECK(d.per_layer[0].attention == AttentionKind::kSliding);
  CHECK(d.per_layer[0].window == 4096);
  CHECK(d.per_layer[0].rope.theta == 50000);
  CHECK(d.per_layer[3].attention == AttentionKind::kFull);
  CHECK(d.per_layer[3].rope.theta == 0);
}

TEST_CASE("cohere2: without layer_types or a pattern, Cohere2Config's default pattern 4 applies") {
  const Model m = model_of(R"({"model_type": "cohere2", "architectures": ["Cohere2ForCausalLM"],
      "vocab_size": 1000, "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 8,
      "num_attention_heads": 4, "sliding_window": 512})");
  const ModelDims& d = dims(m);
  CHECK(d.per_layer[2].attention == AttentionKind::kSliding);
  CHECK(d.per_layer[3].attention == AttentionKind::kFull);
  CHECK(d.per_layer[7].attention == AttentionKind::kFull);
}

TEST_CASE("phimoe: microsoft/Phi-3.5-MoE-instruct gives 41.9B total, 6.6B active") {
  const Model m = model_of(R"({"model_type": "phimoe", "architectures": ["PhiMoEForCausalLM"],
      "vocab_size": 32064, "hidden_size": 4096, "intermediate_size": 6400, "num_hidden_layers": 32,
      "num_attention_heads": 32, "num_key_value_heads": 8, "num_local_experts": 16,
      "num_experts_per_tok": 2, "max_position_embeddings": 131072, "attention_bias": true,
      "lm_head_bias": true, "tie_word_embeddings": false, "rms_norm_eps": 1e-05,
      "torch_dtype": "bfloat16"})");
  // architectures[0] names the remote-code class PhiMoEForCausalLM: built as transformers' own.
  CHECK(m.class_name() == "PhimoeForCausalLM");
  CHECK(rounded(m.parameters, 1) == 41.9);
  CHECK(rounded(active(m), 1) == 6.6);
  CHECK(shape_of(m.tree, "lm_head.bias") == Shape{32064});
  CHECK(shape_of(m.tree, "model.layers.0.input_layernorm.bias") == Shape{4096});
  CHECK(shape_of(m.tree, "model.layers.0.block_sparse_moe.experts.15.w2.weight") == Shape{4096, 6400});
}

TEST_CASE("smollm3: HuggingFaceTB/SmolLM3-3B gives the Hub's 3.08B; every 4th layer NoPE") {
  const Model m = model_of(R"({"model_type": "smollm3", "architectures": ["SmolLM3ForCausalLM"],
      "vocab_size": 128256, "hidden_size": 2048, "intermediate_size": 11008, "num_hidden_layers": 36,
      "num_attention_heads": 16, "num_key_value_heads": 4, "max_position_embeddings": 65536,
      "tie_word_embeddings": true, "rope_theta": 5000000.0, "use_sliding_window": false,
      "no_rope_layer_interval": 4, "torch_dtype": "bfloat16"})");
  CHECK(rounded(m.parameters, 2) == 3.08);
  const ModelDims& d = dims(m);
  CHECK(d.per_layer[0].rope.theta == 5000000.0);
  CHECK(d.per_layer[3].rope.theta == 0);
  CHECK(d.per_layer[3].attention == AttentionKind::kFull);
}

TEST_CASE("seed_oss: ByteDance-Seed/Seed-OSS-36B-Instruct's config gives the Hub's 36,151,104,512; q/k/v biases only") {
  // embed and lm_head 2·155136·5120; 64 layers of q 5120·10240 + 10240, k and v 5120·1024 + 1024,
  // o 10240·5120 (no bias), the MLP 3·5120·27648, two norms; the final norm.
  const Model m = model_of(R"({"model_type": "seed_oss", "architectures": ["SeedOssForCausalLM"],
    "vocab_size": 155136, "hidden_size": 5120, "intermediate_size": 27648, "num_hidden_layers": 64,
    "num_attention_heads": 80, "num_key_value_heads": 8, "head_dim": 128, "attention_bias": true,
    "attention_out_bias": false, "mlp_bias": false, "max_position_embeddings": 524288, "tie_word_embeddings": false})");
  CHECK(m.parameters == 36151104512ULL);
  CHECK(shape_of(m.tree, "model.layers.63.self_attn.q_proj.bias") == Shape{10240});
  CHECK(m.tree.find_tensor("model.layers.0.self_attn.o_proj.bias") < 0);
  CHECK(dims(m).per_layer.front().kv_heads == 8);
}

TEST_CASE("arcee: ArceeConfig's defaults by hand; AFM-4.5B's shape gives the Hub's 4.62B; an MLP without a gate") {
  // Defaults: untied 32000·2560 twice; 32 layers of q/k/v/o 4·2560² (32 heads = KV heads), up/down
  // 2·2560·18432, two norms; the final norm.
  const Model defaults = model_of(R"({"model_type": "arcee", "architectures": ["ArceeForCausalLM"]})");
  CHECK(defaults.parameters == 2ULL * 32000 * 2560 + 32ULL * (4 * 2560 * 2560 + 2 * 2560 * 18432 + 2 * 2560) + 2560);
  CHECK(defaults.tree.find_tensor("model.layers.0.mlp.gate_proj.weight") < 0);
  CHECK(shape_of(defaults.tree, "model.layers.31.mlp.up_proj.weight") == Shape{18432, 2560});
  const Model afm = model_of(R"({"model_type": "arcee", "architectures": ["ArceeForCausalLM"], "hidden_size": 2560,
    "intermediate_size": 18432, "num_attention_heads": 20, "num_key_value_heads": 4, "num_hidden_layers": 36,
    "vocab_size": 128004, "head_dim": 128, "tie_word_embeddings": false, "hidden_act": "relu2"})");
  CHECK(rounded(afm.parameters, 2) == 4.62);
}

TEST_CASE("nemotron: Minitron-8B's shape by hand; LayerNorm1P norms with biases, a gateless MLP, half the head rotated") {
  // Untied 256000·4096 twice; 32 layers of q 4096·6144, k/v 4096·1024, o 6144·4096, up/down
  // 2·4096·16384, two LayerNorms 2·8192; the final LayerNorm.
  const Model m = model_of(R"({"model_type": "nemotron", "architectures": ["NemotronForCausalLM"], "hidden_size": 4096,
    "intermediate_size": 16384, "num_hidden_layers": 32, "num_attention_heads": 48, "num_key_value_heads": 8,
    "head_dim": 128, "vocab_size": 256000, "tie_word_embeddings": false, "partial_rotary_factor": 0.5})");
  CHECK(m.parameters ==
        2ULL * 256000 * 4096 + 32ULL * (4096 * 6144 * 2 + 2 * 4096 * 1024 + 2 * 4096 * 16384 + 2 * 8192) + 8192);
  CHECK(shape_of(m.tree, "model.layers.0.input_layernorm.bias") == Shape{4096});
  CHECK(m.tree.find_tensor("model.layers.0.mlp.gate_proj.weight") < 0);
  CHECK(dims(m).per_layer.front().rope.rotary_dims == 64);
  // Without the key, NemotronConfig's partial_rotary_factor 0.5 applies.
  const Model defaults = model_of(R"({"model_type": "nemotron", "architectures": ["NemotronForCausalLM"],
    "num_key_value_heads": 8})");
  CHECK(dims(defaults).per_layer.front().rope.rotary_dims == 6144 / 48 / 2);
}

TEST_CASE("ernie4_5_moe: baidu/ERNIE-4.5-21B-A3B-PT gives 21B total, 3B activated (truncated, as the card writes them)") {
  const Model m = model_of(R"({"model_type": "ernie4_5_moe", "architectures": ["Ernie4_5_MoeForCausalLM"],
      "vocab_size": 103424, "hidden_size": 2560, "intermediate_size": 12288, "num_hidden_layers": 28,
      "num_attention_heads": 20, "num_key_value_heads": 4, "max_position_embeddings": 131072,
      "moe_num_experts": 64, "moe_k": 6, "moe_intermediate_size": 1536, "moe_num_shared_experts": 2,
      "moe_layer_start_index": 1, "moe_layer_interval": 1, "tie_word_embeddings": true,
      "use_bias": false, "torch_dtype": "bfloat16"})");
  CHECK(std::floor(in_billions(m.parameters)) == 21);
  CHECK(std::floor(in_billions(active(m))) == 3);
  CHECK(m.tree.find_module("model.layers.0.mlp.experts") < 0);  // layer 0 is dense
  CHECK(shape_of(m.tree, "model.layers.1.mlp.moe_statics.e_score_correction_bias") == Shape{1, 64});
  CHECK(shape_of(m.tree, "model.layers.1.mlp.shared_experts.up_proj.weight") == Shape{3072, 2560});
}

// Hand-sized from the source's shapes: embeddings 103,424*1,024 (tied) + 18 layers * (q 1,024*2,048
// + k, v 1,024*256 + o 2,048*1,024 + MLP 3*1,024*3,072 + two norms 1,024) + the final norm.
TEST_CASE("ernie4_5: baidu/ERNIE-4.5-0.3B-PT's dimensions give 360,748,032 by hand (head_dim 128, not hidden / heads)") {
  const Model m = model_of(R"({"model_type": "ernie4_5", "architectures": ["Ernie4_5ForCausalLM"],
      "vocab_size": 103424, "hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 18,
      "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 128,
      "max_position_embeddings": 131072, "tie_word_embeddings": true, "use_bias": false})");
  CHECK(m.parameters == 360748032ULL);
}

TEST_CASE("glm4: THUDM/GLM-4-9B-0414 gives the Hub's 9.4B; four norms, fused MLP, half RoPE") {
  const Model m = model_of(R"({"model_type": "glm4", "architectures": ["Glm4ForCausalLM"],
      "vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 13696, "num_hidden_layers": 40,
      "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
      "partial_rotary_factor": 0.5, "attention_bias": true, "max_position_embeddings": 32768,
      "tie_word_embeddings": false, "torch_dtype": "bfloat16"})");
  CHECK(rounded(m.parameters, 1) == 9.4);
  CHECK(shape_of(m.tree, "model.layers.0.mlp.gate_up_proj.weight") == Shape{27392, 4096});
  CHECK(shape_of(m.tree, "model.layers.0.self_attn.k_proj.bias") == Shape{256});
  CHECK(m.tree.find_tensor("model.layers.0.self_attn.o_proj.bias") < 0);
  CHECK(m.tree.find_tensor("model.layers.0.post_mlp_layernorm.weight") >= 0);
  CHECK(dims(m).per_layer[0].rope.rotary_dims == 64);
}

TEST_CASE("glm4_moe: zai-org/GLM-4.5-Air gives 106B total, 12B active without embeddings") {
  const Model m = model_of(R"({"model_type": "glm4_moe", "architectures": ["Glm4MoeForCausalLM"],
      "vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 10944,
      "moe_intermediate_size": 1408, "num_hidden_layers": 46, "num_attention_heads": 96,
      "num_key_value_heads": 8, "head_dim": 128, "n_routed_experts": 128, "n_shared_experts": 1,
      "first_k_dense_replace": 1, "num_experts_per_tok": 8, "partial_rotary_factor": 0.5,
      "attention_bias": true, "use_qk_norm": false, "num_nextn_predict_layers": 1,
      "max_position_embeddings": 131072, "tie_word_embeddings": false, "torch_dtype": "bfloat16"})");
  CHECK(std::floor(in_billions(m.parameters)) == 106);
  CHECK(rounded(active(m) - embeddings(m.tree), 0) == 12);
  const ModelDims& d = dims(m);
  CHECK(d.per_layer[0].moe.experts == 0);
  CHECK(d.per_layer[1].moe.experts == 128);
  CHECK(d.per_layer[1].moe.shared == 1);
  // The multi-token-prediction layer (46) is not part of the model.
  CHECK(m.tree.find_module("model.layers.46") < 0);
  const int bias = m.tree.find_tensor("model.layers.1.mlp.gate.e_score_correction_bias");
  REQUIRE(bias >= 0);
  CHECK(m.tree.tensors[static_cast<std::size_t>(bias)].kind == TensorKind::kBuffer);
}

TEST_CASE("kimi_k2: moonshotai/Kimi-K2-Instruct gives 1T total, 32B activated (DeepseekV3 remote code)") {
  const Model m = model_of(R"({"model_type": "kimi_k2", "architectures": ["DeepseekV3ForCausalLM"],
      "auto_map": {"AutoConfig": "configuration_deepseek.DeepseekV3Config",
                   "AutoModelForCausalLM": "modeling_deepseek.DeepseekV3ForCausalLM"},
      "vocab_size": 163840, "hidden_size": 7168, "intermediate_size": 18432,
      "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 64,
      "num_key_value_heads": 64, "n_routed_experts": 384, "n_shared_experts": 1,
      "first_k_dense_replace": 1, "moe_layer_freq": 1, "num_experts_per_tok": 8,
      "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
      "v_head_dim": 128, "topk_method": "noaux_tc", "num_nextn_predict_layers": 0,
      "max_position_embeddings": 131072, "tie_word_embeddings": false,
      "rope_scaling": {"type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096},
      "torch_dtype": "bfloat16"})");
  CHECK(m.class_name() == "DeepseekV3ForCausalLM");
  CHECK(std::round(m.parameters / 1e12) == 1);
  CHECK(std::floor(in_billions(active(m))) == 32);
  const ModelDims& d = dims(m);
  CHECK(d.per_layer[0].attention == AttentionKind::kMla);
  CHECK(d.per_layer[0].mla.latent() == 576);
  CHECK(d.per_layer[0].moe.experts == 0);
  CHECK(d.per_layer[60].moe.experts == 384);
}

TEST_CASE("deepseek_v32: DeepSeek-V3.2's shape is V3's 671B plus one lightning indexer per layer") {
  const Model m = model_of(R"({"model_type": "deepseek_v32", "architectures": ["DeepseekV32ForCausalLM"],
      "vocab_size": 129280, "hidden_size": 7168, "intermediate_size": 18432,
      "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 128,
      "num_key_value_heads": 128, "n_routed_experts": 256, "n_shared_experts": 1,
      "first_k_dense_replace": 3, "num_experts_per_tok": 8, "q_lora_rank": 1536,
      "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128,
      "index_n_heads": 64, "index_head_dim": 128, "index_topk": 2048,
      "max_position_embeddings": 163840, "tie_word_embeddings": false,
      "num_nextn_predict_layers": 1, "torch_dtype": "bfloat16"})");
  // Per layer, from the source's shapes: wq_b 1536*64*128 + wk 7168*128 + k_norm 2*128 +
  // weights_proj 7168*64 = 13,959,424.
  const double indexers = 61.0 * 13959424.0;
  CHECK(std::floor(in_billions(m.parameters - indexers)) == 671);  // DeepSeek-V3's card
  CHECK(shape_of(m.tree, "model.layers.0.self_attn.indexer.wq_b.weight") == Shape{8192, 1536});
  CHECK(shape_of(m.tree, "model.layers.60.self_attn.indexer.k_norm.bias") == Shape{128});
  CHECK(shape_of(m.tree, "model.layers.0.self_attn.indexer.weights_proj.weight") == Shape{64, 7168});
  CHECK(m.tree.find_tensor("model.layers.0.self_attn.rotary_emb.inv_freq") < 0);
  CHECK(shape_of(m.tree, "model.rotary_emb.inv_freq") == Shape{32});
  const ModelDims& d = dims(m);
  CHECK(d.per_layer[2].moe.experts == 0);
  CHECK(d.per_layer[3].moe.experts == 256);
  CHECK(d.per_layer[3].attention == AttentionKind::kMla);
}

TEST_CASE("glm_moe_dsa: zai-org/GLM-5 (GlmMoeDsaConfig's defaults) gives 744B total, 40B active without embeddings") {
  const Model m = model_of(R"({"model_type": "glm_moe_dsa", "architectures": ["GlmMoeDsaForCausalLM"],
      "vocab_size": 154880, "hidden_size": 6144, "intermediate_size": 12288,
      "moe_intermediate_size": 2048, "num_hidden_layers": 78, "num_attention_heads": 64,
      "num_key_value_heads": 64, "n_routed_experts": 256, "n_shared_experts": 1,
      "first_k_dense_replace": 3, "num_experts_per_tok": 8, "q_lora_rank": 2048,
      "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 192, "v_head_dim": 256,
      "index_n_heads": 32, "index_head_dim": 128, "max_position_embeddings": 202752,
      "tie_word_embeddings": false})");
  CHECK(rounded(m.parameters, 0) == 744);
  CHECK(rounded(active(m) - embeddings(m.tree), 0) == 40);
  CHECK(shape_of(m.tree, "model.layers.0.self_attn.kv_b_proj.weight") == Shape{64 * (192 + 256), 512});
  CHECK(dims(m).per_layer[0].k_head_dim == 256);
}

TEST_CASE("glm_moe_dsa: a 'shared' indexer_types layer has no indexer; a bad entry is named") {
  const std::string head = R"({"model_type": "glm_moe_dsa", "architectures": ["GlmMoeDsaForCausalLM"],
      "vocab_size": 100, "hidden_size": 64, "intermediate_size": 128, "moe_intermediate_size": 32,
      "num_hidden_layers": 2, "num_attention_heads": 2, "n_routed_experts": 4,
      "num_experts_per_tok": 2, "q_lora_rank": 32, "kv_lora_rank": 16, "qk_rope_head_dim": 8,
      "qk_nope_head_dim": 8, "v_head_dim": 8, "index_n_heads": 2, "index_head_dim": 16, )";
  const Model m = model_of(head + R"("indexer_types": ["full", "shared"]})");
  CHECK(m.tree.find_module("model.layers.0.self_attn.indexer") >= 0);
  CHECK(m.tree.find_module("model.layers.1.self_attn.indexer") < 0);
  EstimateRequest bad;
  bad.config_text = head + R"("indexer_types": ["full", "sometimes"]})";
  const Result<Model> r = build_model(bad);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message().find("'indexer_types'[1] is 'sometimes'") != std::string::npos);
}

TEST_CASE("minimax_m2: MiniMaxAI/MiniMax-M2.5's real config gives 230B total, 10B active without embeddings") {
  const auto ref = test::reference_dir();
  if (!ref) return test::skip_loudly("MiniMax-M2.5 (real-hub config)");
  const Model m = model_of(test::read_text(*ref + "/real-hub/MiniMaxAI--MiniMax-M2.5/config.json"),
                           "MiniMaxAI/MiniMax-M2.5");
  CHECK(m.class_name() == "MiniMaxM2ForCausalLM");
  CHECK(std::round(in_billions(m.parameters) / 10) * 10 == 230);
  CHECK(rounded(active(m) - embeddings(m.tree), 0) == 10);
  CHECK(shape_of(m.tree, "model.layers.0.self_attn.q_norm.weight") == Shape{6144});
  CHECK(shape_of(m.tree, "model.layers.0.self_attn.k_norm.weight") == Shape{1024});
  CHECK(shape_of(m.tree, "model.layers.61.block_sparse_moe.experts.255.w1.weight") == Shape{1536, 3072});
  CHECK(shape_of(m.tree, "model.layers.0.block_sparse_moe.e_score_correction_bias") == Shape{256});
  CHECK(dims(m).per_layer[0].rope.rotary_dims == 64);
  CHECK(dims(m).experts_per_token == 8);
}

TEST_CASE("modernbert: answerdotai/ModernBERT-base and -large give their cards' 149M and 395M") {
  const std::string common = R"("model_type": "modernbert", "architectures": ["ModernBertForMaskedLM"],
      "vocab_size": 50368, "global_attn_every_n_layers": 3, "local_attention": 128,
      "max_position_embeddings": 8192, "norm_bias": false, "attention_bias": false,
      "mlp_bias": false, "decoder_bias": true, "classifier_bias": false,
      "global_rope_theta": 160000.0, "local_rope_theta": 10000.0, "torch_dtype": "float32", )";
  const Model base = model_of("{" + common + R"("hidden_size": 768, "intermediate_size": 1152,
      "num_hidden_layers": 22, "num_attention_heads": 12})");
  const Model large = model_of("{" + common + R"("hidden_size": 1024, "intermediate_size": 2624,
      "num_hidden_layers": 28, "num_attention_heads": 16})");
  // The cards write the count truncated to millions (base: 149.66M with the MLM head).
  CHECK(std::floor(base.parameters / 1e6) == 149);
  CHECK(std::floor(large.parameters / 1e6) == 395);
  CHECK(base.tree.find_tensor("model.layers.0.attn_norm.weight") < 0);  // nn.Identity in layer 0
  CHECK(shape_of(base.tree, "model.layers.1.attn.Wqkv.weight") == Shape{2304, 768});
  CHECK(shape_of(base.tree, "model.layers.1.mlp.Wi.weight") == Shape{2304, 768});
  CHECK(base.tree.tensors[static_cast<std::size_t>(base.tree.find_tensor("decoder.weight"))].is_alias());
  const ModelDims& d = dims(base);
  CHECK(d.per_layer[0].attention == AttentionKind::kFull);
  CHECK(d.per_layer[0].rope.theta == 160000.0);
  CHECK(d.per_layer[1].attention == AttentionKind::kSliding);
  CHECK(d.per_layer[1].window == 128);
  CHECK(d.per_layer[1].rope.theta == 10000.0);
}

TEST_CASE("glm4_moe_lite: Glm4MoeLiteConfig's defaults (GLM-4.7-Flash, MTP at model.layers.47) give its 30B-A3B; MLA without an indexer") {
  const Model m = model_of(R"({"model_type": "glm4_moe_lite", "architectures": ["Glm4MoeLiteForCausalLM"]})");
  CHECK(rounded(m.parameters, 0) == 30);
  CHECK(std::floor(in_billions(active(m) - embeddings(m.tree))) == 3);
  CHECK(m.tree.find_module("model.layers.1.self_attn.indexer") < 0);
  CHECK(m.tree.find_module("model.layers.0.mlp.experts") < 0);
  CHECK(shape_of(m.tree, "model.layers.1.mlp.experts.63.gate_proj.weight") == Shape{1536, 2048});
  CHECK(shape_of(m.tree, "model.layers.0.self_attn.q_b_proj.weight") == Shape{20 * 256, 768});
  CHECK(dims(m).per_layer[0].attention == AttentionKind::kMla);
}

TEST_CASE("bad per-layer lists: mlp_layer_types changes the tree and fails the build; no_rope_layers waits for the KV cache") {
  EstimateRequest moe;
  moe.config_text = R"({"model_type": "deepseek_v32", "architectures": ["DeepseekV32ForCausalLM"],
      "vocab_size": 100, "hidden_size": 64, "intermediate_size": 128, "moe_intermediate_size": 32,
      "num_hidden_layers": 2, "num_attention_heads": 2, "n_routed_experts": 4,
      "num_experts_per_tok": 2, "q_lora_rank": 32, "kv_lora_rank": 16, "qk_rope_head_dim": 8,
      "qk_nope_head_dim": 8, "v_head_dim": 8, "index_n_heads": 2, "index_head_dim": 16,
      "mlp_layer_types": ["dense", "sparse", "sparse"]})";
  const Result<Model> r = build_model(moe);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message().find("'mlp_layer_types' has 3 entries for 2 layers") != std::string::npos);

  const Model m = model_of(R"({"model_type": "smollm3", "architectures": ["SmolLM3ForCausalLM"],
      "vocab_size": 100, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 4,
      "num_attention_heads": 4, "num_key_value_heads": 2, "no_rope_layers": [1, 1, 0]})");
  CHECK(m.parameters > 0);
  const ModelDims& d = dims(m);
  REQUIRE(d.attention_error.has_value());
  CHECK(d.attention_error->message().find("'no_rope_layers' has 3 entries for 4 layers") != std::string::npos);
}
