// OLMo 3, GraniteMoeShared and ERNIE 4.5 VL: parameter counts against the sizes their cards name,
// or counted by hand from the transformers source's shapes where no count is published, plus the
// layout details a count cannot see (which layers slide, where the shared MLP sits, the stored
// names of the text and vision experts).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "memfit/model/model.h"
#include "memfit/model/model_dims.h"
#include "support/model_of.h"

using namespace memfit;

namespace {

using test::build_error;
using test::model_of;

double billions(double n) { return n / 1e9; }

Shape shape_of(const TensorTree& t, const std::string& name) {
  const int i = t.find_tensor(name);
  REQUIRE_MESSAGE(i >= 0, "no tensor " << name);
  return t.tensors[static_cast<std::size_t>(i)].shape;
}

const ModelDims& dims(const Model& m) {
  REQUIRE(m.dims.get());
  return *m.dims.get();
}

// Parameters whose name starts with `prefix`.
double parameters_under(const TensorTree& t, const std::string& prefix) {
  double n = 0;
  for (int i : t.named_parameters()) {
    const TensorInfo& info = t.tensors[static_cast<std::size_t>(i)];
    if (info.name.rfind(prefix, 0) == 0) n += static_cast<double>(info.numel);
  }
  return n;
}

}  // namespace

// OLMo 3's published sizes (allenai/Olmo-3-1025-7B, Olmo-3-1125-32B: "7B", "32B"); the
// dimensions are the ones the OLMo 3 report gives (32B: GQA with 40 query heads over 8 KV heads).
TEST_CASE("olmo3: the 7B and 32B shapes give the cards' 7B and 32B; OLMo 2's post-norm tree") {
  const std::string common = R"("model_type": "olmo3", "architectures": ["Olmo3ForCausalLM"],
      "vocab_size": 100278, "max_position_embeddings": 65536, "tie_word_embeddings": false,
      "rope_theta": 500000, "sliding_window": 4096, "rms_norm_eps": 1e-06, )";
  const Model small = model_of("{" + common + R"("hidden_size": 4096, "intermediate_size": 11008,
      "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32})");
  const Model large = model_of("{" + common + R"("hidden_size": 5120, "intermediate_size": 27648,
      "num_hidden_layers": 64, "num_attention_heads": 40, "num_key_value_heads": 8})");
  CHECK(small.class_name() == "Olmo3ForCausalLM");
  CHECK(std::round(billions(small.parameters)) == 7);
  CHECK(std::round(billions(large.parameters)) == 32);
  CHECK(large.tree.find_module("model.layers.0.input_layernorm") < 0);
  CHECK(shape_of(large.tree, "model.layers.0.post_feedforward_layernorm.weight") == Shape{5120});
  CHECK(shape_of(large.tree, "model.layers.0.self_attn.q_norm.weight") == Shape{5120});
  CHECK(shape_of(large.tree, "model.layers.0.self_attn.k_norm.weight") == Shape{1024});
}

TEST_CASE("olmo3: three sliding layers then a full one; YaRN only on the full layers") {
  const Model m = model_of(R"({"model_type": "olmo3", "architectures": ["Olmo3ForCausalLM"],
      "vocab_size": 1000, "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 8,
      "num_attention_heads": 4, "num_key_value_heads": 2, "rope_theta": 500000,
      "sliding_window": 4096, "rope_scaling": {"rope_type": "yarn", "factor": 8.0,
      "original_max_position_embeddings": 8192, "attention_factor": 1.2079441541679836,
      "beta_fast": 32, "beta_slow": 1}})");
  const ModelDims& d = dims(m);
  REQUIRE(d.per_layer.size() == 8);
  for (std::size_t i : {0u, 1u, 2u, 4u, 5u, 6u}) {
    CAPTURE(i);
    CHECK(d.per_layer[i].attention == AttentionKind::kSliding);
    CHECK(d.per_layer[i].window == 4096);
    CHECK(d.per_layer[i].rope.theta == 500000);
    CHECK_FALSE(d.per_layer[i].rope.scaled);
  }
  for (std::size_t i : {3u, 7u}) {
    CAPTURE(i);
    CHECK(d.per_layer[i].attention == AttentionKind::kFull);
    CHECK(d.per_layer[i].rope.scaled);
    CHECK(d.per_layer[i].rope.scaling_type == "yarn");
    CHECK(d.per_layer[i].rope.factor == 8.0);
  }
}

TEST_CASE("olmo3: Olmo3Config's defaults, transformers 5's rope_parameters, a null window, a bad layer_types") {
  // Without sliding_window or layer_types: the class default (4096, every 4th layer full).
  const Model defaults = model_of(R"({"model_type": "olmo3", "architectures": ["Olmo3ForCausalLM"],
      "vocab_size": 100, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 4,
      "num_attention_heads": 4})");
  CHECK(dims(defaults).per_layer[0].window == 4096);
  CHECK(dims(defaults).per_layer[3].attention == AttentionKind::kFull);

  const Model v5 = model_of(R"({"model_type": "olmo3", "architectures": ["Olmo3ForCausalLM"],
      "vocab_size": 100, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
      "num_attention_heads": 4, "sliding_window": 512,
      "layer_types": ["sliding_attention", "full_attention"],
      "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                          "full_attention": {"rope_type": "yarn", "factor": 4.0, "rope_theta": 500000.0}}})");
  CHECK(dims(v5).per_layer[0].window == 512);
  CHECK(dims(v5).per_layer[0].rope.theta == 10000.0);
  CHECK_FALSE(dims(v5).per_layer[0].rope.scaled);
  CHECK(dims(v5).per_layer[1].rope.theta == 500000.0);
  CHECK(dims(v5).per_layer[1].rope.factor == 4.0);

  const Model no_window = model_of(R"({"model_type": "olmo3", "architectures": ["Olmo3ForCausalLM"],
      "vocab_size": 100, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
      "num_attention_heads": 4, "sliding_window": null})");
  CHECK(dims(no_window).per_layer[0].attention == AttentionKind::kFull);

  const Model bad = model_of(R"({"model_type": "olmo3", "architectures": ["Olmo3ForCausalLM"],
      "vocab_size": 100, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
      "num_attention_heads": 4, "layer_types": ["full_attention"]})");
  CHECK(bad.parameters > 0);  // the tree does not depend on it; the KV cache does
  REQUIRE(dims(bad).attention_error.has_value());
  CHECK(dims(bad).attention_error->message().find("'layer_types' has 1 entries for 2 layers") != std::string::npos);
}

// No GraniteMoeShared checkpoint publishes a count memfit can read; counted by hand from
// modular_granitemoeshared.py's shapes: embed_tokens and lm_head 100·64 each, per layer q 64·64,
// k and v 64·32 (2 KV heads of 16), o 64·64, input_linear [4, 2·32, 64], output_linear [4, 64, 32],
// router 4·64, shared_mlp input_linear [2·48, 64] and output_linear [64, 48], two norms 64; the
// final norm 64: 2·6,400 + 2·46,464 + 64 = 105,792.
TEST_CASE("granitemoeshared: GraniteMoe plus shared_mlp after the layer's norms, counted by hand") {
  const std::string head = R"({"model_type": "granitemoeshared", "architectures": ["GraniteMoeSharedForCausalLM"],
      "vocab_size": 100, "hidden_size": 64, "intermediate_size": 32, "num_hidden_layers": 2,
      "num_attention_heads": 4, "num_key_value_heads": 2, "num_local_experts": 4,
      "num_experts_per_tok": 2, "tie_word_embeddings": false, )";
  const Model m = model_of(head + R"("shared_intermediate_size": 48})");
  CHECK(m.class_name() == "GraniteMoeSharedForCausalLM");
  CHECK(m.parameters == 105792ULL);
  CHECK(shape_of(m.tree, "model.layers.1.shared_mlp.input_linear.weight") == Shape{96, 64});
  CHECK(shape_of(m.tree, "model.layers.1.shared_mlp.output_linear.weight") == Shape{64, 48});
  CHECK(shape_of(m.tree, "model.layers.1.block_sparse_moe.input_linear.weight") == Shape{4, 64, 64});
  CHECK(m.tree.find_module("model.layers.0.shared_mlp") > m.tree.find_module("model.layers.0.post_attention_layernorm"));
  const ModelDims& d = dims(m);
  CHECK(d.experts == 4);
  CHECK(d.per_layer[0].moe.shared == 1);
  CHECK(d.per_layer[0].moe.shared_width == 48);
  // The shared MLP runs for every token: only the routed experts are scaled by top-k / experts.
  CHECK(active_parameters(m.tree, d) == doctest::Approx(105792.0 - 2 * (16384 + 8192) / 2.0));

  // shared_intermediate_size 0 (GraniteMoeSharedConfig's default): no shared_mlp at all.
  const Model none = model_of(head + R"("shared_intermediate_size": 0})");
  CHECK(none.tree.find_module("model.layers.0.shared_mlp") < 0);
  CHECK(none.parameters == 105792ULL - 2 * 9216);
}

// ERNIE-4.5-VL-28B-A3B's text and vision dimensions (its config: 28 layers, moe_num_experts
// [64, 64], moe_intermediate_size [1536, 512], 2 shared experts; a 32-block tower of width 1280).
// Its card's "28B total" counts the language model with both expert sets (28.62B), truncated as
// the ERNIE 4.5 cards write their sizes; the tower and the resampler add 0.77B, counted by hand:
//   tower      patch_embed 588·1280 + 32 blocks · (norms 4·1280 + qkv 1280·3840 + 3840
//              + proj 1280² + 1280 + fc1 1280·5120 + 5120 + fc2 5120·1280 + 1280) + ln 2·1280
//              = 630,433,280
//   resampler  S = 1280·4 = 5120: spatial (S² + S)·2 + 2S, temporal 2S·S + S + S² + S + 2S,
//              mlp S·2560 + 2560, after_norm 2560 = 144,225,280
TEST_CASE("ernie4_5_vl_moe: ERNIE-4.5-VL-28B-A3B's language model gives the card's 28B; tower and resampler by hand") {
  const Model m = model_of(R"({"model_type": "ernie4_5_vl_moe",
      "architectures": ["Ernie4_5_VLMoeForConditionalGeneration"], "tie_word_embeddings": true,
      "text_config": {"vocab_size": 103424, "hidden_size": 2560, "intermediate_size": 12288,
        "num_hidden_layers": 28, "num_attention_heads": 20, "num_key_value_heads": 4,
        "max_position_embeddings": 131072, "moe_num_experts": 64, "moe_k": 6,
        "moe_intermediate_size": [1536, 512], "moe_num_shared_experts": 2, "use_bias": false,
        "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0, "mrope_section": [22, 22, 20]},
        "tie_word_embeddings": true},
      "vision_config": {"depth": 32, "hidden_size": 1280, "intermediate_size": 5120, "num_heads": 16,
        "patch_size": 14, "in_channels": 3, "spatial_merge_size": 2, "temporal_merge_size": 2,
        "hidden_act": "quick_gelu"}})");
  CHECK(m.class_name() == "Ernie4_5_VLMoeForConditionalGeneration");
  const double tower = parameters_under(m.tree, "vision_model.");
  const double resampler = parameters_under(m.tree, "model.resampler_model.");
  CHECK(tower == 630433280.0);
  CHECK(resampler == 144225280.0);
  CHECK(std::floor(billions(m.parameters - tower - resampler)) == 28);
  CHECK(shape_of(m.tree, "model.layers.1.mlp.experts.0.up_proj.weight") == Shape{1536, 2560});
  CHECK(shape_of(m.tree, "model.layers.1.mlp.experts.64.up_proj.weight") == Shape{512, 2560});
  CHECK(m.tree.find_module("model.layers.1.mlp.experts.128") < 0);
  CHECK(shape_of(m.tree, "model.layers.27.mlp.shared_experts.down_proj.weight") == Shape{2560, 3072});
  CHECK(shape_of(m.tree, "model.layers.1.mlp.gate.weight_1") == Shape{2560, 64});
  CHECK(shape_of(m.tree, "model.layers.1.mlp.moe_statics.e_score_correction_bias") == Shape{2, 64});
  CHECK(m.tree.find_module("model.layers.0.mlp.experts") < 0);  // layer 0 is dense
  CHECK(shape_of(m.tree, "vision_model.patch_embed.proj.weight") == Shape{1280, 588});
  CHECK(shape_of(m.tree, "model.resampler_model.temporal_linear.0.weight") == Shape{5120, 10240});
  CHECK(m.tree.tensors[static_cast<std::size_t>(m.tree.find_tensor("lm_head.weight"))].is_alias());
  const ModelDims& d = dims(m);
  CHECK(d.per_layer[0].moe.experts == 0);
  CHECK(d.per_layer[1].moe.experts == 64);
  CHECK(d.per_layer[1].moe.expert_width == 1536);
  CHECK(d.per_layer[0].kv_heads == 4);
  CHECK(d.per_layer[0].rope.theta == 500000.0);
}

// Counted by hand from modeling_ernie4_5_vl_moe.py's shapes. Text: embed_tokens 100·32 (tied),
// 2 layers of q 32·32, k and v 32·16, o 32·32 and two norms 32; layer 0 MLP 3·32·64; layer 1:
// moe_statics 2·4, gate 2·32·4, 4 text experts 3·32·16, 4 vision experts 3·32·8, shared 3·32·16;
// norm 32 — 26,664. Tower: patch_embed 12·16, a block (norms 64, qkv 16·48 + 48, proj 16² + 16,
// fc1 16·32 + 32, fc2 32·16 + 16), ln 32 — 2,448. Resampler (S = 64): spatial 2·(64² + 64) + 128,
// temporal 128·64 + 64 + 64² + 64 + 128, mlp 64·32 + 32, after_norm 32 — 23,104.
TEST_CASE("ernie4_5_vl_moe: a small config counted by hand; moe_num_experts as a list") {
  const std::string text = R"("text_config": {"vocab_size": 100, "hidden_size": 32,
      "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
      "num_key_value_heads": 2, "moe_k": 2, "moe_intermediate_size": [16, 8],
      "moe_num_shared_experts": 1, )";
  const std::string vision = R"("vision_config": {"depth": 1, "hidden_size": 16,
      "intermediate_size": 32, "num_heads": 2, "patch_size": 2, "spatial_merge_size": 2,
      "temporal_merge_size": 2}})";
  const std::string head = R"({"model_type": "ernie4_5_vl_moe",
      "architectures": ["Ernie4_5_VLMoeForConditionalGeneration"], )";
  const Model m = model_of(head + text + R"("moe_num_experts": 4}, )" + vision);
  CHECK(m.parameters == 26664ULL + 2448ULL + 23104ULL);
  const Model listed = model_of(head + text + R"("moe_num_experts": [4, 4]}, )" + vision);
  CHECK(listed.parameters == m.parameters);
  // The text config's tie_word_embeddings wins over the composite's (ERNIE-4.5-VL-424B: untied).
  const Model untied = model_of(R"({"model_type": "ernie4_5_vl_moe", "tie_word_embeddings": true, )" + text +
                                R"("moe_num_experts": 4, "tie_word_embeddings": false}, )" + vision);
  CHECK(untied.parameters == m.parameters + 100 * 32);
  const std::string err = build_error(head + text + R"("moe_num_experts": [4, 8]}, )" + vision);
  CHECK(err.find("'moe_num_experts' = [4,8]") != std::string::npos);
  const std::string widths = build_error(head + R"("text_config": {"moe_intermediate_size": [16]}})");
  CHECK(widths.find("'moe_intermediate_size'") != std::string::npos);
}

// openbmb/MiniCPM-V-2_6's config (Qwen2-7B's dimensions, SigLIP-400M at 980 px, 64 queries):
// its card's "8B" ("built on SigLip-400M and Qwen2-7B with a total of 8B parameters").
TEST_CASE("minicpmv: MiniCPM-V 2.6 gives the card's 8B; Qwen2 under llm, the navit tower under vpm, the resampler") {
  const Model m = model_of(R"({"model_type": "minicpmv", "architectures": ["MiniCPMV"], "version": 2.6,
      "auto_map": {"AutoConfig": "configuration_minicpm.MiniCPMVConfig",
                   "AutoModel": "modeling_minicpmv.MiniCPMV",
                   "AutoModelForCausalLM": "modeling_minicpmv.MiniCPMV"},
      "vocab_size": 151666, "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
      "num_attention_heads": 28, "num_key_value_heads": 4, "max_position_embeddings": 32768,
      "rope_theta": 1000000.0, "tie_word_embeddings": false, "query_num": 64,
      "drop_vision_last_layer": false,
      "vision_config": {"hidden_size": 1152, "image_size": 980, "intermediate_size": 4304,
        "model_type": "siglip", "num_attention_heads": 16, "num_hidden_layers": 27, "patch_size": 14}})");
  CHECK(m.class_name() == "MiniCPMV");
  CHECK(std::round(billions(m.parameters)) == 8);
  CHECK(shape_of(m.tree, "llm.model.layers.0.self_attn.q_proj.bias") == Shape{3584});  // Qwen2
  CHECK(shape_of(m.tree, "llm.lm_head.weight") == Shape{151666, 3584});
  CHECK(shape_of(m.tree, "vpm.embeddings.position_embedding.weight") == Shape{4900, 1152});
  CHECK(m.tree.find_module("vpm.encoder.layers.26") >= 0);  // drop_vision_last_layer false
  CHECK(shape_of(m.tree, "resampler.kv_proj.weight") == Shape{3584, 1152});
  CHECK(shape_of(m.tree, "resampler.attn.in_proj_weight") == Shape{3 * 3584, 3584});
  CHECK(shape_of(m.tree, "resampler.proj") == Shape{3584, 3584});
  CHECK(dims(m).layers == 28);
}

// Counted by hand from the remote code's shapes. No `version` and hidden_size 64: 2.5, a Llama.
// llm: embed_tokens and lm_head 100·64 each, a layer of q/k/v/o 64² and a 3·64·128 MLP and two
// norms, the final norm — 53,952. vpm (the last of 3 layers dropped): patch_embedding 32·3·4·4 +
// 32, position_embedding (16/4)²·32, 2 layers of k/v/q/out 32² + 32, fc1 32·48 + 48, fc2 48·32 + 32
// and two LayerNorms, post_layernorm — 17,152. resampler: query 4·64, kv_proj 32·64, in_proj
// 192·64 + 192, out_proj 64² + 64, three LayerNorms, proj 64² — 23,424.
TEST_CASE("minicpmv: a 2.5 layout counted by hand; versions memfit does not describe are named") {
  const std::string body = R"("model_type": "minicpmv", "architectures": ["MiniCPMV"],
      "vocab_size": 100, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 1,
      "num_attention_heads": 4, "tie_word_embeddings": false, "query_num": 4,
      "vision_config": {"hidden_size": 32, "intermediate_size": 48, "num_attention_heads": 2,
        "num_hidden_layers": 3, "patch_size": 4, "image_size": 16})";
  const Model m = model_of("{" + body + "}");
  CHECK(m.parameters == 53952ULL + 17152ULL + 23424ULL);
  CHECK(m.tree.find_tensor("llm.model.layers.0.self_attn.q_proj.bias") < 0);  // Llama
  CHECK(m.tree.find_module("vpm.encoder.layers.2") < 0);
  const int pos = m.tree.find_tensor("resampler.pos_embed");
  REQUIRE(pos >= 0);
  CHECK(m.tree.tensors[static_cast<std::size_t>(pos)].kind == TensorKind::kBuffer);
  CHECK(build_error("{" + body + R"(, "version": 4.5})").find("MiniCPM-V version 4.5 is not described") !=
        std::string::npos);
  CHECK(build_error("{" + body + R"(, "version": 2.0})").find("version 2.0") != std::string::npos);
  CHECK(build_error("{" + body + R"(, "version": "new"})").find("key 'version'") != std::string::npos);
}
