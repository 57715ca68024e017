// The Llama-shaped decoders (core/model/arch/llama_like.*): Llama, Mistral, Mixtral, Qwen2,
// Qwen2-MoE, Gemma, Phi-3, OLMo, StarCoder2 and DeepSeek (remote code).
//
// Authorities: the published parameter counts of the real checkpoints (model cards, papers, the
// Hub's safetensors totals), the checkpoints' tensor shapes, and arithmetic from the transformers
// 4.40 source written out in comments. The configs under tests/fixtures/configs/ are the Hub's
// config.json files of those models.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "memfit/memory/estimate.h"
#include "support/reference.h"

using namespace memfit;

namespace {

std::string cfg(const std::string& stem) { return test::fixture("configs/" + stem + ".json"); }

Report report_of(const std::string& config_text, Mode mode = Mode::kMemfit,
                 const std::string& cls = "") {
  EstimateRequest req;
  req.config_text = config_text;
  req.name = "test";
  req.mode = mode;
  req.class_override = cls;
  auto r = estimate(req);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  return *r;
}

TensorTree tree_of(const std::string& config_text, const std::string& cls = "") {
  EstimateRequest req;
  req.config_text = config_text;
  req.name = "test";
  req.class_override = cls;
  auto t = build_tree(req);
  REQUIRE_MESSAGE(t.ok(), t.error().message());
  return *t;
}

Shape shape_of(const TensorTree& t, const std::string& name) {
  const int i = t.find_tensor(name);
  REQUIRE_MESSAGE(i >= 0, "no tensor " << name);
  return t.tensors[i].shape;
}

bool has_tensor(const TensorTree& t, const std::string& name) { return t.find_tensor(name) >= 0; }

std::string class_of(const TensorTree& t, const std::string& module) {
  const int i = t.find_module(module);
  REQUIRE_MESSAGE(i >= 0, "no module " << module);
  return t.modules[i].class_name;
}

// The config with some keys replaced.
std::string patched(const std::string& stem, const nlohmann::json& changes) {
  auto j = nlohmann::ordered_json::parse(cfg(stem));
  for (const auto& [k, v] : changes.items()) j[k] = v;
  return j.dump();
}

ErrorCode error_of(const std::string& config_text) {
  EstimateRequest req;
  req.config_text = config_text;
  req.name = "test";
  auto r = estimate(req);
  REQUIRE_FALSE(r.ok());
  return r.error().code();
}

std::vector<std::string> param_names(const TensorTree& t, std::size_t n) {
  std::vector<std::string> out;
  for (int i : t.named_parameters()) {
    if (out.size() == n) break;
    out.push_back(t.tensors[i].name);
  }
  return out;
}

}  // namespace

TEST_CASE("llama-like: published parameter counts of the architectures[0] class") {
  struct Case {
    const char* stem;
    const char* cls;
    std::uint64_t params;
  };
  const Case cases[] = {
      {"meta-llama--Llama-2-7b-hf", "LlamaForCausalLM", 6738415616ULL},
      {"meta-llama--Meta-Llama-3-8B", "LlamaForCausalLM", 8030261248ULL},
      {"mistralai--Mistral-7B-v0.1", "MistralForCausalLM", 7241732096ULL},
      {"mistralai--Mixtral-8x7B-v0.1", "MixtralForCausalLM", 46702792704ULL},
      // Qwen1.5-0.5B (tied): 151936*1024 + 24 * (3*(1024*1024+1024) + 1024*1024 +
      // 3*1024*2816 + 2*1024) + 1024 = 463,987,712 (the Hub's 464M).
      {"Qwen--Qwen1.5-0.5B", "Qwen2ForCausalLM", 463987712ULL},
      {"Qwen--Qwen2-7B", "Qwen2ForCausalLM", 7615616512ULL},
      {"Qwen--Qwen1.5-MoE-A2.7B", "Qwen2MoeForCausalLM", 14315784192ULL},
      {"google--gemma-7b", "GemmaForCausalLM", 8537680896ULL},
      {"google--gemma-2b", "GemmaForCausalLM", 2506172416ULL},
      {"microsoft--Phi-3-mini-4k-instruct", "Phi3ForCausalLM", 3821079552ULL},
      {"allenai--OLMo-7B-hf", "OlmoForCausalLM", 6888095744ULL},
      {"bigcode--starcoder2-3b", "Starcoder2ForCausalLM", 3030371328ULL},
      // deepseek-moe-16b (published 16.4B): 2*102400*2048 + 2048 + layer 0 dense
      // (4*2048^2 + 3*2048*10944 + 2*2048) + 27 MoE layers (4*2048^2 + 64*3*2048*1408 +
      // 64*2048 + 3*2048*2816 + 2*2048) = 16,375,728,128.
      {"deepseek-ai--deepseek-moe-16b-base", "DeepseekForCausalLM", 16375728128ULL},
      {"deepseek-ai--DeepSeek-V2-Lite", "DeepseekV2ForCausalLM", 15706484224ULL},
      // DeepSeek-V3: 671B without the multi-token-prediction layer 61 (685B with it).
      {"deepseek-ai--DeepSeek-V3", "DeepseekV3ForCausalLM", 671026419200ULL},
  };
  for (const auto& c : cases) {
    SUBCASE(c.stem) {
      const Report r = report_of(cfg(c.stem));
      CHECK(r.model_class == c.cls);
      CHECK(r.parameters == c.params);
      // Parameters do not depend on the mode.
      CHECK(report_of(cfg(c.stem), Mode::kAccelerate, c.cls).parameters == c.params);
    }
  }
}

TEST_CASE("llama-like: Llama-2-7b tensors, order, no-split and 4.40 rotary buffers") {
  const TensorTree t = tree_of(cfg("meta-llama--Llama-2-7b-hf"));
  CHECK(t.no_split_classes == std::vector<std::string>{"LlamaDecoderLayer"});
  CHECK(shape_of(t, "model.embed_tokens.weight") == Shape{32000, 4096});
  CHECK(shape_of(t, "model.layers.31.mlp.down_proj.weight") == Shape{4096, 11008});
  CHECK(shape_of(t, "lm_head.weight") == Shape{32000, 4096});
  CHECK_FALSE(has_tensor(t, "model.layers.0.self_attn.q_proj.bias"));
  // LlamaAttention registers q, k, v, o; then LlamaMLP gate, up, down; then the two norms.
  CHECK(param_names(t, 10) == std::vector<std::string>{
                                  "model.embed_tokens.weight",
                                  "model.layers.0.self_attn.q_proj.weight",
                                  "model.layers.0.self_attn.k_proj.weight",
                                  "model.layers.0.self_attn.v_proj.weight",
                                  "model.layers.0.self_attn.o_proj.weight",
                                  "model.layers.0.mlp.gate_proj.weight",
                                  "model.layers.0.mlp.up_proj.weight",
                                  "model.layers.0.mlp.down_proj.weight",
                                  "model.layers.0.input_layernorm.weight",
                                  "model.layers.0.post_attention_layernorm.weight"});
  CHECK(class_of(t, "model.layers.0.self_attn.rotary_emb") == "LlamaRotaryEmbedding");
  // 4.40: per layer inv_freq [64] + _cos_cached/_sin_cached [4096, 128] in float32.
  CHECK(shape_of(t, "model.layers.0.self_attn.rotary_emb._cos_cached") == Shape{4096, 128});
  const Report acc = report_of(cfg("meta-llama--Llama-2-7b-hf"), Mode::kAccelerate);
  CHECK(acc.model_class == "LlamaModel");  // no auto_map: accelerate builds AutoModel
  CHECK(acc.buffers_bytes == 32 * (64 * 4 + 2 * 4096.0 * 128 * 4));
  // Current transformers: one model-level inv_freq [64].
  CHECK(report_of(cfg("meta-llama--Llama-2-7b-hf")).buffers_bytes == 64 * 4);
}

TEST_CASE("llama-like: Llama-3-8B grouped-query attention and rope_scaling classes") {
  const TensorTree t = tree_of(cfg("meta-llama--Meta-Llama-3-8B"));
  CHECK(shape_of(t, "model.layers.0.self_attn.k_proj.weight") == Shape{1024, 4096});
  CHECK(shape_of(t, "model.layers.0.self_attn.v_proj.weight") == Shape{1024, 4096});
  CHECK(shape_of(t, "lm_head.weight") == Shape{128256, 4096});
  const TensorTree linear = tree_of(patched("meta-llama--Meta-Llama-3-8B",
                                            {{"rope_scaling", {{"type", "linear"}, {"factor", 2.0}}}}));
  CHECK(class_of(linear, "model.layers.0.self_attn.rotary_emb") ==
        "LlamaLinearScalingRotaryEmbedding");
  // Only non-persistent buffers change with rope_scaling; the parameters do not.
  CHECK(linear.parameter_count() == t.parameter_count());
}

TEST_CASE("llama-like: Llama sequence classification head") {
  const TensorTree t = tree_of(patched("meta-llama--Llama-2-7b-hf", {{"num_labels", 3}}),
                               "LlamaForSequenceClassification");
  CHECK(shape_of(t, "score.weight") == Shape{3, 4096});
  CHECK_FALSE(has_tensor(t, "score.bias"));
  CHECK_FALSE(has_tensor(t, "lm_head.weight"));
  CHECK(t.parameter_count() == 6738415616ULL - 32000ULL * 4096 + 3 * 4096);
}

TEST_CASE("llama-like: Mistral registers cos_cached/sin_cached (no underscore) per layer") {
  const TensorTree t = tree_of(cfg("mistralai--Mistral-7B-v0.1"));
  CHECK(t.no_split_classes == std::vector<std::string>{"MistralDecoderLayer"});
  CHECK(shape_of(t, "model.layers.0.self_attn.k_proj.weight") == Shape{1024, 4096});
  CHECK(shape_of(t, "model.layers.3.self_attn.rotary_emb.cos_cached") == Shape{32768, 128});
  CHECK_FALSE(has_tensor(t, "model.layers.3.self_attn.rotary_emb._cos_cached"));
  const Report acc = report_of(cfg("mistralai--Mistral-7B-v0.1"), Mode::kAccelerate);
  CHECK(acc.buffers_bytes == 32 * (64 * 4 + 2 * 32768.0 * 128 * 4));
}

TEST_CASE("llama-like: Mixtral sparse MoE block") {
  const TensorTree t = tree_of(cfg("mistralai--Mixtral-8x7B-v0.1"));
  CHECK(class_of(t, "model.layers.0.block_sparse_moe") == "MixtralSparseMoeBlock");
  CHECK(shape_of(t, "model.layers.0.block_sparse_moe.gate.weight") == Shape{8, 4096});
  CHECK(shape_of(t, "model.layers.31.block_sparse_moe.experts.7.w1.weight") == Shape{14336, 4096});
  CHECK(shape_of(t, "model.layers.31.block_sparse_moe.experts.7.w2.weight") == Shape{4096, 14336});
  CHECK(shape_of(t, "model.layers.31.block_sparse_moe.experts.7.w3.weight") == Shape{14336, 4096});
  CHECK_FALSE(has_tensor(t, "model.layers.0.block_sparse_moe.experts.8.w1.weight"));
  CHECK(t.no_split_classes == std::vector<std::string>{"MixtralDecoderLayer"});
}

TEST_CASE("llama-like: Qwen2 biases on q/k/v only, tie from the config") {
  const TensorTree small = tree_of(cfg("Qwen--Qwen1.5-0.5B"));
  CHECK(shape_of(small, "model.layers.0.self_attn.q_proj.bias") == Shape{1024});
  CHECK(shape_of(small, "model.layers.0.self_attn.v_proj.bias") == Shape{1024});
  CHECK_FALSE(has_tensor(small, "model.layers.0.self_attn.o_proj.bias"));
  // tie_word_embeddings: true → lm_head is the embedding, counted once.
  const int lm = small.find_tensor("lm_head.weight");
  REQUIRE(lm >= 0);
  CHECK(small.tensors[lm].is_alias());
  CHECK(small.tensors[small.tensors[lm].tied_to].name == "model.embed_tokens.weight");
  const TensorTree big = tree_of(cfg("Qwen--Qwen2-7B"));
  CHECK(shape_of(big, "model.layers.0.self_attn.k_proj.bias") == Shape{512});
  CHECK_FALSE(big.tensors[big.find_tensor("lm_head.weight")].is_alias());
  CHECK(shape_of(big, "model.layers.0.self_attn.rotary_emb.sin_cached") == Shape{131072, 128});
}

TEST_CASE("llama-like: Qwen2-MoE sparse blocks, shared expert, decoder_sparse_step, mlp_only_layers") {
  const TensorTree t = tree_of(cfg("Qwen--Qwen1.5-MoE-A2.7B"));
  CHECK(class_of(t, "model.layers.0.mlp") == "Qwen2MoeSparseMoeBlock");
  CHECK(shape_of(t, "model.layers.0.mlp.gate.weight") == Shape{60, 2048});
  CHECK(shape_of(t, "model.layers.0.mlp.experts.59.down_proj.weight") == Shape{2048, 1408});
  CHECK(shape_of(t, "model.layers.0.mlp.shared_expert.up_proj.weight") == Shape{5632, 2048});
  CHECK(shape_of(t, "model.layers.0.mlp.shared_expert_gate.weight") == Shape{1, 2048});
  // The sparse block registers gate, experts, shared_expert, shared_expert_gate.
  std::vector<std::string> children;
  for (int c : t.modules[t.find_module("model.layers.0.mlp")].children)
    children.push_back(t.modules[c].name);
  CHECK(children == std::vector<std::string>{
                        "model.layers.0.mlp.gate", "model.layers.0.mlp.experts",
                        "model.layers.0.mlp.shared_expert", "model.layers.0.mlp.shared_expert_gate"});
  // decoder_sparse_step 2: layer i is sparse when (i + 1) % 2 == 0; mlp_only_layers forces dense.
  const TensorTree stepped = tree_of(patched(
      "Qwen--Qwen1.5-MoE-A2.7B", {{"decoder_sparse_step", 2}, {"mlp_only_layers", nlohmann::json::array({3})}}));
  CHECK(class_of(stepped, "model.layers.0.mlp") == "Qwen2MoeMLP");
  CHECK(shape_of(stepped, "model.layers.0.mlp.gate_proj.weight") == Shape{5632, 2048});
  CHECK(class_of(stepped, "model.layers.1.mlp") == "Qwen2MoeSparseMoeBlock");
  CHECK(class_of(stepped, "model.layers.3.mlp") == "Qwen2MoeMLP");
  CHECK(class_of(stepped, "model.layers.5.mlp") == "Qwen2MoeSparseMoeBlock");
  // 11 sparse layers (1,5,7,...,23) and 13 dense: swap 13 sparse MLPs (553,773,056 each) for
  // dense ones (3*2048*5632 = 34,603,008).
  CHECK(stepped.parameter_count() == 14315784192ULL - 13ULL * (553773056ULL - 34603008ULL));
}

TEST_CASE("llama-like: Gemma head_dim from the config, tied head, no 4.40 rotary tensor") {
  const TensorTree t = tree_of(cfg("google--gemma-7b"));
  // 16 heads x head_dim 256 = 4096 != hidden 3072.
  CHECK(shape_of(t, "model.layers.0.self_attn.q_proj.weight") == Shape{4096, 3072});
  CHECK(shape_of(t, "model.layers.0.self_attn.o_proj.weight") == Shape{3072, 4096});
  CHECK(class_of(t, "model.norm") == "GemmaRMSNorm");
  CHECK(t.tensors[t.find_tensor("lm_head.weight")].is_alias());
  CHECK(t.no_split_classes == std::vector<std::string>{"GemmaDecoderLayer"});
  // 4.40 GemmaRotaryEmbedding registers inv_freq as None: nothing for accelerate to count.
  CHECK(report_of(cfg("google--gemma-7b"), Mode::kAccelerate).buffers_bytes == 0);
  CHECK(report_of(cfg("google--gemma-7b")).buffers_bytes == 128 * 4);
  const TensorTree two = tree_of(cfg("google--gemma-2b"));
  CHECK(shape_of(two, "model.layers.0.self_attn.k_proj.weight") == Shape{256, 2048});  // MQA
}

TEST_CASE("llama-like: Phi-3 fused projections, o_proj first, auto_map class") {
  const TensorTree t = tree_of(cfg("microsoft--Phi-3-mini-4k-instruct"));
  CHECK(shape_of(t, "model.layers.0.self_attn.qkv_proj.weight") == Shape{9216, 3072});
  CHECK(shape_of(t, "model.layers.0.mlp.gate_up_proj.weight") == Shape{16384, 3072});
  CHECK(shape_of(t, "model.layers.0.mlp.down_proj.weight") == Shape{3072, 8192});
  CHECK(param_names(t, 3) == std::vector<std::string>{
                                 "model.embed_tokens.weight",
                                 "model.layers.0.self_attn.o_proj.weight",
                                 "model.layers.0.self_attn.qkv_proj.weight"});
  // auto_map names AutoModelForCausalLM, so accelerate builds Phi3ForCausalLM; 4.40's Phi-3
  // rotary registers inv_freq as None, so there are no buffers at all.
  const Report acc = report_of(cfg("microsoft--Phi-3-mini-4k-instruct"), Mode::kAccelerate);
  CHECK(acc.model_class == "Phi3ForCausalLM");
  CHECK(acc.buffers_bytes == 0);
  const TensorTree tok = tree_of(cfg("microsoft--Phi-3-mini-4k-instruct"),
                                 "Phi3ForTokenClassification");
  CHECK(shape_of(tok, "classifier.weight") == Shape{2, 3072});
  CHECK(shape_of(tok, "classifier.bias") == Shape{2});
}

TEST_CASE("llama-like: OLMo layer norms have no parameters") {
  const TensorTree t = tree_of(cfg("allenai--OLMo-7B-hf"));
  CHECK(class_of(t, "model.norm") == "OlmoLayerNorm");
  CHECK(class_of(t, "model.layers.0.input_layernorm") == "OlmoLayerNorm");
  CHECK_FALSE(has_tensor(t, "model.norm.weight"));
  CHECK_FALSE(has_tensor(t, "model.layers.0.input_layernorm.weight"));
  CHECK(shape_of(t, "model.layers.0.self_attn.rotary_emb._sin_cached") == Shape{2048, 128});
}

TEST_CASE("llama-like: StarCoder2 biases, LayerNorm and tied head") {
  const TensorTree t = tree_of(cfg("bigcode--starcoder2-3b"));
  CHECK(shape_of(t, "model.layers.0.self_attn.k_proj.weight") == Shape{256, 3072});
  CHECK(shape_of(t, "model.layers.0.self_attn.o_proj.bias") == Shape{3072});
  CHECK(shape_of(t, "model.layers.0.mlp.c_fc.weight") == Shape{12288, 3072});
  CHECK(shape_of(t, "model.layers.0.mlp.c_proj.bias") == Shape{3072});
  CHECK(shape_of(t, "model.norm.bias") == Shape{3072});
  CHECK(class_of(t, "model.layers.0.post_attention_layernorm") == "LayerNorm");
  CHECK(t.tensors[t.find_tensor("lm_head.weight")].is_alias());
  // use_bias false drops every linear bias (not the LayerNorm ones).
  const TensorTree nobias = tree_of(patched("bigcode--starcoder2-3b", {{"use_bias", false}}));
  CHECK_FALSE(has_tensor(nobias, "model.layers.0.mlp.c_fc.bias"));
  CHECK(has_tensor(nobias, "model.layers.0.input_layernorm.bias"));
}

TEST_CASE("llama-like: DeepSeek-V2-Lite multi-head latent attention and MoE layout") {
  const TensorTree t = tree_of(cfg("deepseek-ai--DeepSeek-V2-Lite"));
  CHECK(t.class_name() == "DeepseekV2ForCausalLM");
  CHECK(t.no_split_classes == std::vector<std::string>{"DeepseekV2DecoderLayer"});
  // q_lora_rank null → q_proj [16 * (128 + 64), 2048].
  CHECK(shape_of(t, "model.layers.0.self_attn.q_proj.weight") == Shape{3072, 2048});
  CHECK(shape_of(t, "model.layers.0.self_attn.kv_a_proj_with_mqa.weight") == Shape{576, 2048});
  CHECK(shape_of(t, "model.layers.0.self_attn.kv_a_layernorm.weight") == Shape{512});
  CHECK(shape_of(t, "model.layers.0.self_attn.kv_b_proj.weight") == Shape{4096, 512});
  CHECK(shape_of(t, "model.layers.0.self_attn.o_proj.weight") == Shape{2048, 2048});
  // first_k_dense_replace 1: layer 0 dense, layer 1 MoE.
  CHECK(shape_of(t, "model.layers.0.mlp.gate_proj.weight") == Shape{10944, 2048});
  CHECK(shape_of(t, "model.layers.1.mlp.gate.weight") == Shape{64, 2048});
  CHECK_FALSE(has_tensor(t, "model.layers.1.mlp.gate.e_score_correction_bias"));
  CHECK(shape_of(t, "model.layers.1.mlp.experts.63.up_proj.weight") == Shape{1408, 2048});
  CHECK(shape_of(t, "model.layers.1.mlp.shared_experts.down_proj.weight") == Shape{2048, 2816});
  std::vector<std::string> children;
  for (int c : t.modules[t.find_module("model.layers.1.mlp")].children)
    children.push_back(t.modules[c].name);
  CHECK(children == std::vector<std::string>{"model.layers.1.mlp.experts", "model.layers.1.mlp.gate",
                                             "model.layers.1.mlp.shared_experts"});
  // Remote code: the yarn rotary caches [163840, 64] exist under any transformers version.
  const double rope_bytes = 27 * (32 * 4 + 2 * 163840.0 * 64 * 4);
  CHECK(report_of(cfg("deepseek-ai--DeepSeek-V2-Lite")).buffers_bytes == rope_bytes);
  const Report acc = report_of(cfg("deepseek-ai--DeepSeek-V2-Lite"), Mode::kAccelerate);
  CHECK(acc.model_class == "DeepseekV2ForCausalLM");  // auto_map's AutoModelForCausalLM
  CHECK(acc.buffers_bytes == rope_bytes);
}

TEST_CASE("llama-like: DeepSeek-V3 q LoRA and the noaux_tc gate bias; V1 Llama attention") {
  const TensorTree t = tree_of(cfg("deepseek-ai--DeepSeek-V3"));
  CHECK(shape_of(t, "model.layers.0.self_attn.q_a_proj.weight") == Shape{1536, 7168});
  CHECK(shape_of(t, "model.layers.0.self_attn.q_a_layernorm.weight") == Shape{1536});
  CHECK(shape_of(t, "model.layers.0.self_attn.q_b_proj.weight") == Shape{24576, 1536});
  CHECK(shape_of(t, "model.layers.0.self_attn.o_proj.weight") == Shape{7168, 16384});
  CHECK(shape_of(t, "model.layers.2.mlp.down_proj.weight") == Shape{7168, 18432});
  CHECK(shape_of(t, "model.layers.3.mlp.gate.e_score_correction_bias") == Shape{256});
  CHECK(has_tensor(t, "model.layers.60.mlp.experts.255.gate_proj.weight"));
  CHECK_FALSE(has_tensor(t, "model.layers.61.input_layernorm.weight"));  // no MTP layer

  const TensorTree v1 = tree_of(cfg("deepseek-ai--deepseek-moe-16b-base"));
  CHECK(shape_of(v1, "model.layers.0.self_attn.k_proj.weight") == Shape{2048, 2048});
  CHECK(shape_of(v1, "model.layers.1.mlp.shared_experts.gate_proj.weight") == Shape{2816, 2048});
  CHECK(shape_of(v1, "model.layers.0.self_attn.rotary_emb.cos_cached") == Shape{4096, 128});
  CHECK(class_of(v1, "model.layers.1.mlp") == "DeepseekMoE");
  // The base class is the config's own version (the family serves three model_types).
  CHECK(tree_of(cfg("deepseek-ai--DeepSeek-V3"), "DeepseekModel").class_name() ==
        "DeepseekV3Model");
}

TEST_CASE("llama-like: bad configs name the key") {
  CHECK(error_of(patched("mistralai--Mistral-7B-v0.1", {{"num_attention_heads", 0}})) ==
        ErrorCode::kInvalidValue);
  // 4096 is not divisible by 30 heads.
  CHECK(error_of(patched("meta-llama--Llama-2-7b-hf", {{"num_attention_heads", 30}})) ==
        ErrorCode::kInvalidValue);
  CHECK(error_of(patched("Qwen--Qwen1.5-MoE-A2.7B", {{"decoder_sparse_step", 0}})) ==
        ErrorCode::kInvalidValue);
  CHECK(error_of(patched("google--gemma-7b", {{"hidden_size", "3072"}})) == ErrorCode::kWrongType);
  CHECK(error_of(patched("deepseek-ai--DeepSeek-V3", {{"moe_layer_freq", 0}})) ==
        ErrorCode::kInvalidValue);
}
