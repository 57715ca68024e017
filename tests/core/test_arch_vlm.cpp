// Vision-language families and their decoders (issue 16): Gemma 3, SigLIP / SigLIP 2, Gemma 4,
// Llama 4, Mistral 3 (Pixtral), LLaVA, LLaVA-NeXT, PaliGemma.
//
// Authorities: each config below is the real config.json published in the named Hub repo (keys
// that change no tensor, such as token ids, left out), or the real-hub sample
// (../shared/reference/real-hub); the expected counts are the ones the Hub's safetensors metadata
// or the model card publishes, never memfit's output:
//   google/gemma-3-4b-it            4,300,079,472 (Hub)
//   llava-hf/llava-1.5-7b-hf        7,063,427,072 (Hub)
//   google/paligemma-3b-pt-224      2.92B (Hub)
//   mistralai/Mistral-Small-3.1-24B-Instruct-2503   24B (card), 24,011,361,280 (Hub)
//   meta-llama/Llama-4-Scout-17B-16E                109B total, 17B active (card),
//                                                   108,641,793,536 (Hub)
//   google/gemma-4-26B-A4B          25.2B total, 3.8B active, vision encoder ~550M (card)
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "memfit/memory/kv_cache.h"
#include "memfit/model/model.h"
#include "memfit/model/model_dims.h"
#include "support/model_of.h"
#include "support/reference.h"

using namespace memfit;
using test::model_of;

namespace {

// The card's figure: `n` in billions, rounded to `digits` decimals.
double billions(double n, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(n / 1e9 * scale) / scale;
}

const ModelDims& dims_of(const Model& m) {
  const ModelDims* d = m.dims.get();
  REQUIRE(d != nullptr);
  return *d;
}

// Parameters under a module prefix (aliases of tied weights not counted).
std::uint64_t params_under(const TensorTree& t, const std::string& prefix) {
  std::uint64_t n = 0;
  for (int i : t.named_parameters()) {
    const TensorInfo& x = t.tensors[static_cast<std::size_t>(i)];
    if (x.name.compare(0, prefix.size(), prefix) == 0) n += x.numel;
  }
  return n;
}

// Routed experts' parameters (what active_parameters scales by top-k / experts).
std::uint64_t expert_params(const TensorTree& t) {
  std::uint64_t n = 0;
  for (int i : t.named_parameters()) {
    const TensorInfo& x = t.tensors[static_cast<std::size_t>(i)];
    if (x.name.find(".experts.") != std::string::npos) n += x.numel;
  }
  return n;
}

bool has_tensor(const TensorTree& t, const std::string& name) { return t.find_tensor(name) >= 0; }

const TensorInfo& tensor(const TensorTree& t, const std::string& name) {
  const int i = t.find_tensor(name);
  REQUIRE_MESSAGE(i >= 0, name);
  return t.tensors[static_cast<std::size_t>(i)];
}

// google/gemma-3-4b-it's config.json: a sparse text_config that Gemma3TextConfig's defaults
// complete (vocab 262208, 8 heads, 4 KV heads, head_dim 256, a global layer every 6th).
constexpr const char* kGemma3_4b = R"({
  "architectures": ["Gemma3ForConditionalGeneration"], "mm_tokens_per_image": 256,
  "model_type": "gemma3", "torch_dtype": "bfloat16",
  "text_config": {"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text",
                  "num_hidden_layers": 34, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                  "sliding_window": 1024},
  "vision_config": {"hidden_size": 1152, "image_size": 896, "intermediate_size": 4304,
                    "model_type": "siglip_vision_model", "num_attention_heads": 16,
                    "num_hidden_layers": 27, "patch_size": 14, "vision_use_head": false}})";

// meta-llama/Llama-4-Scout-17B-16E's config.json (the keys that shape tensors and attention).
constexpr const char* kScout = R"({
  "architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
  "tie_word_embeddings": false, "torch_dtype": "bfloat16",
  "text_config": {"attention_bias": false, "attention_chunk_size": 8192, "head_dim": 128,
    "hidden_act": "silu", "hidden_size": 5120, "interleave_moe_layer_step": 1,
    "intermediate_size": 8192, "intermediate_size_mlp": 16384, "max_position_embeddings": 10485760,
    "model_type": "llama4_text",
    "no_rope_layers": [1,1,1,0,1,1,1,0,1,1,1,0,1,1,1,0,1,1,1,0,1,1,1,0,1,1,1,0,1,1,1,0,1,1,1,0,1,1,1,0,1,1,1,0,1,1,1,0],
    "num_attention_heads": 40, "num_experts_per_tok": 1, "num_hidden_layers": 48,
    "num_key_value_heads": 8, "num_local_experts": 16, "rms_norm_eps": 1e-05,
    "rope_scaling": {"factor": 16.0, "high_freq_factor": 1.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "rope_theta": 500000.0, "use_qk_norm": true, "vocab_size": 202048},
  "vision_config": {"hidden_act": "gelu", "hidden_size": 1408, "image_size": 336,
    "intermediate_size": 5632, "model_type": "llama4_vision_model", "num_attention_heads": 16,
    "num_channels": 3, "num_hidden_layers": 34, "patch_size": 14, "pixel_shuffle_ratio": 0.5,
    "projector_input_dim": 4096, "projector_output_dim": 4096, "rope_theta": 10000,
    "vision_output_dim": 4096}})";

// mistralai/Mistral-Small-3.1-24B-Instruct-2503's config.json.
constexpr const char* kMistralSmall31 = R"({
  "architectures": ["Mistral3ForConditionalGeneration"], "model_type": "mistral3",
  "multimodal_projector_bias": false, "projector_hidden_act": "gelu", "spatial_merge_size": 2,
  "text_config": {"head_dim": 128, "hidden_act": "silu", "hidden_size": 5120,
    "intermediate_size": 32768, "max_position_embeddings": 131072, "model_type": "mistral",
    "num_attention_heads": 32, "num_hidden_layers": 40, "num_key_value_heads": 8,
    "rms_norm_eps": 1e-05, "rope_theta": 1000000000.0, "sliding_window": null,
    "vocab_size": 131072},
  "torch_dtype": "bfloat16",
  "vision_config": {"head_dim": 64, "hidden_act": "silu", "hidden_size": 1024, "image_size": 1540,
    "intermediate_size": 4096, "model_type": "pixtral", "num_attention_heads": 16,
    "num_channels": 3, "num_hidden_layers": 24, "patch_size": 14, "rope_theta": 10000.0},
  "vision_feature_layer": -1})";

// llava-hf/llava-1.5-7b-hf's config.json: Vicuna-7B's text_config completed by LlamaConfig.
constexpr const char* kLlava15 = R"({
  "architectures": ["LlavaForConditionalGeneration"], "model_type": "llava",
  "projector_hidden_act": "gelu", "tie_word_embeddings": false, "torch_dtype": "float16",
  "text_config": {"architectures": ["LlamaForCausalLM"], "max_position_embeddings": 4096,
                  "model_type": "llama", "rms_norm_eps": 1e-05, "torch_dtype": "float16",
                  "vocab_size": 32064},
  "vision_config": {"hidden_size": 1024, "image_size": 336, "intermediate_size": 4096,
                    "model_type": "clip_vision_model", "num_attention_heads": 16,
                    "num_hidden_layers": 24, "patch_size": 14, "projection_dim": 768,
                    "vocab_size": 32000},
  "vision_feature_layer": -2, "vision_feature_select_strategy": "default", "vocab_size": 32064})";

// google/paligemma-3b-pt-224's config.json.
constexpr const char* kPaliGemma = R"({
  "architectures": ["PaliGemmaForConditionalGeneration"], "hidden_size": 2048,
  "model_type": "paligemma", "projection_dim": 2048, "torch_dtype": "float32",
  "text_config": {"hidden_size": 2048, "intermediate_size": 16384, "model_type": "gemma",
                  "num_attention_heads": 8, "num_hidden_layers": 18, "num_image_tokens": 256,
                  "num_key_value_heads": 1, "torch_dtype": "float32", "vocab_size": 257216},
  "vision_config": {"hidden_size": 1152, "intermediate_size": 4304,
                    "model_type": "siglip_vision_model", "num_attention_heads": 16,
                    "num_hidden_layers": 27, "num_image_tokens": 256, "patch_size": 14,
                    "projection_dim": 2048, "projector_hidden_act": "gelu_fast",
                    "vision_use_head": false},
  "vocab_size": 257216})";

}  // namespace

TEST_CASE("gemma3: google/gemma-3-4b-it gives the Hub's 4,300,079,472 in its stored layout") {
  const Model m = model_of(kGemma3_4b, "google/gemma-3-4b-it");
  CHECK(m.class_name() == "Gemma3ForConditionalGeneration");
  CHECK(m.parameters == 4300079472ULL);
  // The names the Hub's safetensors hold; the head is tied, so not stored.
  CHECK(has_tensor(m.tree, "language_model.model.layers.33.self_attn.k_norm.weight"));
  CHECK(has_tensor(m.tree, "vision_tower.vision_model.encoder.layers.26.mlp.fc2.bias"));
  CHECK(tensor(m.tree, "multi_modal_projector.mm_input_projection_weight").shape == Shape{1152, 2560});
  CHECK(tensor(m.tree, "language_model.lm_head.weight").is_alias());
  CHECK_FALSE(has_tensor(m.tree, "vision_tower.vision_model.head.probe"));  // vision_use_head false
  // The language model's layers, first.
  REQUIRE_FALSE(m.tree.no_split_classes.empty());
  CHECK(m.tree.no_split_classes.front() == "Gemma3DecoderLayer");
}

TEST_CASE("gemma3: a global layer every 6th, sliding 1024; local RoPE 10k, global 1M scaled x8") {
  const Model m = model_of(kGemma3_4b, "google/gemma-3-4b-it");
  const ModelDims& d = dims_of(m);
  REQUIRE(d.per_layer.size() == 34);
  CHECK(d.hidden == 2560);
  CHECK(d.vocab == 262208);
  for (std::size_t i = 0; i < 34; ++i) {
    INFO("layer " << i);
    const LayerDims& l = d.per_layer[i];
    const bool global = (i + 1) % 6 == 0;
    CHECK(l.attention == (global ? AttentionKind::kFull : AttentionKind::kSliding));
    CHECK(l.window == (global ? 0 : 1024));
    CHECK(l.heads == 8);
    CHECK(l.kv_heads == 4);
    CHECK(l.k_head_dim == 256);
    CHECK(l.rope.theta == (global ? 1e6 : 1e4));
    CHECK(l.rope.scaled == global);
  }
  CHECK(d.generative);
}

TEST_CASE("siglip / siglip2: both towers, SigLIP's pooling head unless vision_use_head is false") {
  // google/siglip-base-patch16-224: SiglipConfig's defaults (both towers 768 wide, 12 layers).
  const Model s = model_of(R"({"model_type": "siglip", "architectures": ["SiglipModel"],
      "text_config": {"vocab_size": 32000}, "vision_config": {"image_size": 224, "patch_size": 16}})");
  CHECK(s.class_name() == "SiglipModel");
  CHECK(tensor(s.tree, "vision_model.embeddings.position_embedding.weight").shape == Shape{196, 768});
  CHECK(tensor(s.tree, "vision_model.head.attention.in_proj_weight").shape == Shape{2304, 768});
  CHECK(tensor(s.tree, "text_model.head.weight").shape == Shape{768, 768});
  CHECK(has_tensor(s.tree, "logit_bias"));
  // SigLIP 2's patch embedding is a Linear over flattened patches, num_patches positions.
  const Model s2 = model_of(R"({"model_type": "siglip2", "architectures": ["Siglip2Model"],
      "vision_config": {"num_patches": 256, "patch_size": 16}})");
  CHECK(tensor(s2.tree, "vision_model.embeddings.patch_embedding.weight").shape == Shape{768, 768});
  CHECK(tensor(s2.tree, "vision_model.embeddings.position_embedding.weight").shape == Shape{256, 768});
  CHECK_FALSE(has_tensor(s2.tree, "vision_model.embeddings.position_ids"));
}

TEST_CASE("llava: llava-hf/llava-1.5-7b-hf gives the Hub's 7,063,427,072") {
  const Model m = model_of(kLlava15, "llava-hf/llava-1.5-7b-hf");
  CHECK(m.class_name() == "LlavaForConditionalGeneration");
  CHECK(m.parameters == 7063427072ULL);
  CHECK(tensor(m.tree, "multi_modal_projector.linear_1.weight").shape == Shape{4096, 1024});
  CHECK(has_tensor(m.tree, "vision_tower.vision_model.post_layernorm.weight"));
  CHECK(has_tensor(m.tree, "language_model.lm_head.weight"));
  CHECK_FALSE(tensor(m.tree, "language_model.lm_head.weight").is_alias());
  const ModelDims& d = dims_of(m);
  CHECK(d.layers == 32);
  CHECK(d.per_layer.at(0).kv_heads == 32);
}

TEST_CASE("llava_next: the same parts plus image_newline [text hidden]") {
  std::string next = kLlava15;
  next.replace(next.find("\"llava\""), 7, "\"llava_next\"");
  next.replace(next.find("LlavaForConditionalGeneration"), 29, "LlavaNextForConditionalGeneration");
  const Model m = model_of(next);
  CHECK(m.class_name() == "LlavaNextForConditionalGeneration");
  CHECK(tensor(m.tree, "image_newline").shape == Shape{4096});
  CHECK(m.parameters == 7063427072ULL + 4096);
}

TEST_CASE("paligemma: google/paligemma-3b-pt-224 gives the Hub's 2.92B; Gemma's head is tied") {
  const Model m = model_of(kPaliGemma, "google/paligemma-3b-pt-224");
  CHECK(m.class_name() == "PaliGemmaForConditionalGeneration");
  CHECK(billions(static_cast<double>(m.parameters), 2) == 2.92);
  CHECK(tensor(m.tree, "multi_modal_projector.linear.weight").shape == Shape{2048, 1152});
  CHECK(tensor(m.tree, "language_model.lm_head.weight").is_alias());
  CHECK(tensor(m.tree, "vision_tower.vision_model.embeddings.position_embedding.weight").shape ==
        Shape{256, 1152});
}

TEST_CASE("mistral3: Mistral-Small-3.1-24B gives its card's 24B; Pixtral tower, patch merger") {
  const Model m = model_of(kMistralSmall31, "mistralai/Mistral-Small-3.1-24B-Instruct-2503");
  CHECK(m.class_name() == "Mistral3ForConditionalGeneration");
  CHECK(billions(static_cast<double>(m.parameters), 0) == 24);
  CHECK(m.parameters == 24011361280ULL);
  CHECK(tensor(m.tree, "multi_modal_projector.patch_merger.merging_layer.weight").shape ==
        Shape{1024, 4096});
  CHECK(tensor(m.tree, "vision_tower.transformer.layers.23.attention.q_proj.weight").shape ==
        Shape{1024, 1024});
  CHECK_FALSE(has_tensor(m.tree, "multi_modal_projector.linear_1.bias"));
  const ModelDims& d = dims_of(m);
  REQUIRE(d.per_layer.size() == 40);
  CHECK(d.per_layer[0].attention == AttentionKind::kFull);  // sliding_window null
  CHECK(d.per_layer[0].k_head_dim == 128);
  CHECK(d.per_layer[0].rope.theta == 1e9);
}

TEST_CASE("llama4: Llama-4-Scout-17B-16E gives its card's 109B total and 17B active") {
  const Model m = model_of(kScout, "meta-llama/Llama-4-Scout-17B-16E");
  CHECK(m.class_name() == "Llama4ForConditionalGeneration");
  CHECK(billions(static_cast<double>(m.parameters), 0) == 109);
  CHECK(m.parameters == 108641793536ULL);
  // The card's 17B active is the language model's: every token's parameters plus 1 of 16 experts.
  const double text = static_cast<double>(params_under(m.tree, "language_model."));
  CHECK(billions(text - static_cast<double>(expert_params(m.tree)) * (1.0 - 1.0 / 16.0), 0) == 17);
  CHECK(dims_of(m).experts_per_token == 1);
  CHECK(tensor(m.tree, "language_model.model.layers.0.feed_forward.experts.gate_up_proj").shape ==
        Shape{16, 5120, 16384});
  CHECK(has_tensor(m.tree, "language_model.model.layers.0.feed_forward.shared_expert.down_proj.weight"));
  CHECK(tensor(m.tree, "multi_modal_projector.linear_1.weight").shape == Shape{5120, 4096});
  CHECK(tensor(m.tree, "vision_model.positional_embedding_vlm").shape == Shape{577, 1408});
  CHECK_FALSE(tensor(m.tree, "language_model.lm_head.weight").is_alias());
}

TEST_CASE("llama4: chunked RoPE layers, every 4th a full-attention NoPE layer; MoE on every layer") {
  const Model m = model_of(kScout, "meta-llama/Llama-4-Scout-17B-16E");
  const ModelDims& d = dims_of(m);
  REQUIRE_FALSE(d.attention_error.has_value());
  REQUIRE(d.per_layer.size() == 48);
  for (std::size_t i = 0; i < 48; ++i) {
    INFO("layer " << i);
    const LayerDims& l = d.per_layer[i];
    const bool nope = (i + 1) % 4 == 0;
    CHECK(l.attention == (nope ? AttentionKind::kFull : AttentionKind::kChunked));
    CHECK(l.window == (nope ? 0 : 8192));
    CHECK(l.rope.theta == (nope ? 0.0 : 500000.0));
    CHECK(l.kv_heads == 8);
    CHECK(l.k_head_dim == 128);
    CHECK(l.moe.experts == 16);
    CHECK(l.moe.active == 1);
    CHECK(l.moe.shared == 1);
  }
  // NoPE layers have no qk_norm; RoPE layers have the parameter-free one.
  CHECK(m.tree.find_module("language_model.model.layers.0.self_attn.qk_norm") >= 0);
  CHECK(m.tree.find_module("language_model.model.layers.3.self_attn.qk_norm") < 0);
}

TEST_CASE("llama4_text: interleave_moe_layer_step 2 alternates dense (intermediate_size_mlp) and MoE") {
  const Model m = model_of(R"({"model_type": "llama4_text", "architectures": ["Llama4ForCausalLM"],
      "hidden_size": 64, "intermediate_size": 32, "intermediate_size_mlp": 128, "num_hidden_layers": 4,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 100,
      "num_local_experts": 4, "num_experts_per_tok": 1, "interleave_moe_layer_step": 2})");
  CHECK(tensor(m.tree, "model.layers.0.feed_forward.gate_proj.weight").shape == Shape{128, 64});
  CHECK(tensor(m.tree, "model.layers.1.feed_forward.experts.down_proj").shape == Shape{4, 32, 64});
  const ModelDims& d = dims_of(m);
  CHECK(d.per_layer[0].moe.experts == 0);
  CHECK(d.per_layer[0].intermediate == 128);
  CHECK(d.per_layer[1].moe.experts == 4);
  CHECK(d.per_layer[1].intermediate == 64);  // one routed expert + the shared one
}

TEST_CASE("gemma4: google/gemma-4-26B-A4B gives its card's 25.2B (3.8B active) and ~550M vision") {
  const auto ref = test::reference_dir();
  if (!ref) return test::skip_loudly("gemma-4-26B-A4B (real-hub config)");
  const Model m = model_of(test::read_text(*ref + "/real-hub/google--gemma-4-26B-A4B/config.json"),
                           "google/gemma-4-26B-A4B");
  CHECK(m.class_name() == "Gemma4ForConditionalGeneration");
  const std::uint64_t text = params_under(m.tree, "model.language_model.");
  const std::uint64_t vision = params_under(m.tree, "model.vision_tower.");
  const std::uint64_t experts = expert_params(m.tree);
  CHECK(billions(static_cast<double>(text), 1) == 25.2);
  // Active: every token's parameters plus 8 of the 128 experts.
  CHECK(billions(static_cast<double>(text) - static_cast<double>(experts) * (1.0 - 8.0 / 128.0), 1) == 3.8);
  // "~550M": the card rounds (the encoder layers alone are 545M, the position table 24M more).
  CHECK(std::abs(static_cast<double>(vision) / 550e6 - 1.0) < 0.05);
  CHECK(tensor(m.tree, "lm_head.weight").is_alias());
  // Global layers: K = V, so no v_proj; 2 KV heads of 512.
  CHECK_FALSE(has_tensor(m.tree, "model.language_model.layers.5.self_attn.v_proj.weight"));
  CHECK(tensor(m.tree, "model.language_model.layers.5.self_attn.k_proj.weight").shape == Shape{1024, 2816});
  CHECK(tensor(m.tree, "model.language_model.layers.0.self_attn.v_proj.weight").shape == Shape{2048, 2816});
  CHECK(tensor(m.tree, "model.language_model.layers.0.experts.gate_up_proj").shape == Shape{128, 1408, 2816});
  CHECK(has_tensor(m.tree, "model.language_model.layers.0.layer_scalar"));
  CHECK(has_tensor(m.tree, "model.embed_vision.embedding_projection.weight"));
}

TEST_CASE("gemma4: sliding 1024 with 8 KV heads of 256, global with 2 KV heads of 512; per-type RoPE") {
  const auto ref = test::reference_dir();
  if (!ref) return test::skip_loudly("gemma-4-26B-A4B (real-hub config)");
  const Model m = model_of(test::read_text(*ref + "/real-hub/google--gemma-4-26B-A4B/config.json"));
  const ModelDims& d = dims_of(m);
  REQUIRE_FALSE(d.attention_error.has_value());
  REQUIRE(d.per_layer.size() == 30);
  for (std::size_t i = 0; i < 30; ++i) {
    INFO("layer " << i);
    const LayerDims& l = d.per_layer[i];
    const bool global = (i + 1) % 6 == 0;
    CHECK(l.attention == (global ? AttentionKind::kFull : AttentionKind::kSliding));
    CHECK(l.window == (global ? 0 : 1024));
    CHECK(l.heads == 16);
    CHECK(l.kv_heads == (global ? 2 : 8));
    CHECK(l.k_head_dim == (global ? 512 : 256));
    CHECK(l.v_head_dim == l.k_head_dim);
    CHECK(l.rope.theta == (global ? 1e6 : 1e4));
    CHECK(l.rope.rotary_dims == (global ? 128 : 256));
    CHECK(l.moe.experts == 128);
    CHECK(l.moe.active == 8);
  }
}

TEST_CASE("gemma4_text: KV-shared layers hold no K/V and cache nothing; PLE tables") {
  const Model m = model_of(R"({"model_type": "gemma4_text", "architectures": ["Gemma4ForCausalLM"],
      "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 4, "num_attention_heads": 2,
      "num_key_value_heads": 1, "head_dim": 32, "global_head_dim": 64, "vocab_size": 100,
      "vocab_size_per_layer_input": 100, "hidden_size_per_layer_input": 8, "sliding_window": 16,
      "num_kv_shared_layers": 2, "use_double_wide_mlp": true,
      "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"]})");
  CHECK(has_tensor(m.tree, "model.layers.1.self_attn.v_proj.weight"));  // attention_k_eq_v false
  CHECK_FALSE(has_tensor(m.tree, "model.layers.2.self_attn.k_proj.weight"));
  CHECK(tensor(m.tree, "model.layers.3.mlp.up_proj.weight").shape == Shape{256, 64});
  CHECK(tensor(m.tree, "model.embed_tokens_per_layer.weight").shape == Shape{100, 32});
  CHECK(tensor(m.tree, "model.per_layer_model_projection.weight").shape == Shape{32, 64});
  const ModelDims& d = dims_of(m);
  CHECK(d.per_layer[1].k_head_dim == 64);
  CHECK(d.per_layer[2].attention == AttentionKind::kNone);
  CHECK(d.per_layer[3].attention == AttentionKind::kNone);
  CHECK(d.per_layer[0].attention == AttentionKind::kSliding);
}

TEST_CASE("vlm: a tower or text model_type memfit does not know is named, not guessed") {
  EstimateRequest req;
  req.config_text = R"({"model_type": "llava", "vision_config": {"model_type": "unknown_tower"}})";
  const Result<Model> m = build_model(req);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().code() == ErrorCode::kUnknownModelType);
  CHECK(m.error().message().find("unknown_tower") != std::string::npos);
}

TEST_CASE("vlm: bad per-layer keys are named; attention-only errors wait for the KV cache") {
  // A layer_types list of the wrong length: the weights still count, the dims say why not.
  const Model m = model_of(R"({"model_type": "llama4_text", "hidden_size": 64, "intermediate_size": 32,
      "intermediate_size_mlp": 128, "num_hidden_layers": 4, "num_attention_heads": 4,
      "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 100, "num_local_experts": 2,
      "layer_types": ["full_attention", "chunked_attention"]})");
  CHECK(m.parameters > 0);
  const ModelDims& d = dims_of(m);
  REQUIRE(d.attention_error.has_value());
  CHECK(d.attention_error->message().find("'layer_types' has 2 entries for 4 layers") != std::string::npos);
  // no_rope_layers decides which layers hold a qk_norm: too short a list fails the build.
  EstimateRequest req;
  req.config_text = R"({"model_type": "llama4_text", "num_hidden_layers": 4, "no_rope_layers": [1, 0]})";
  const Result<Model> n = build_model(req);
  REQUIRE_FALSE(n.ok());
  CHECK(n.error().message().find("'no_rope_layers' has 2 entries for 4 layers") != std::string::npos);
  // More KV-shared layers than layers: the tree itself cannot be built.
  req.config_text = R"({"model_type": "gemma4_text", "num_hidden_layers": 2, "num_kv_shared_layers": 3})";
  const Result<Model> g = build_model(req);
  REQUIRE_FALSE(g.ok());
  CHECK(g.error().code() == ErrorCode::kInvalidValue);
  CHECK(g.error().message().find("'num_kv_shared_layers' (3) exceeds 'num_hidden_layers' (2)") != std::string::npos);
  // A nested config that is not an object.
  req.config_text = R"({"model_type": "gemma3", "vision_config": 7})";
  const Result<Model> v = build_model(req);
  REQUIRE_FALSE(v.ok());
  CHECK(v.error().message().find("vision_config") != std::string::npos);
}

TEST_CASE("vlm: the KV cache reads the composites' language-model layers") {
  const AttentionLayout g3 = attention_layout(model_of(kGemma3_4b));
  CHECK(g3.layers.size() == 34);
  CHECK(g3.sliding_layers() == 29);
  CHECK(g3.layers[0].window == 1024);
  const AttentionLayout scout = attention_layout(model_of(kScout));
  CHECK(scout.layers.size() == 48);
  CHECK(scout.sliding_layers() == 36);  // chunked layers keep one chunk, as a window does
  CHECK(scout.layers[3].kv_heads == 8);
  const AttentionLayout llava = attention_layout(model_of(kLlava15));
  CHECK(llava.sliding_layers() == 0);
  CHECK(llava.layers[0].k_head_dim == 128);
}
