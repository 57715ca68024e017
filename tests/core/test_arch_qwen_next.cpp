// Hybrid, vision-language and sink-attention families of issue 16: Qwen3-Next, Qwen3.5,
// Qwen2.5-VL, gpt-oss.
//
// Authorities (golden numbers never come from memfit):
// - the real config.json files in ../shared/reference/real-hub, and Qwen2.5-VL-7B-Instruct's real
//   model.safetensors.index.json (its total_size: 16,584,333,312 bytes of bf16 = 8,292,166,656
//   parameters);
// - the parameter count the Hub shows for Qwen/Qwen2-VL-7B-Instruct (8.29B), on its public
//   config's dimensions;
// - model cards: Qwen3-Next-80B-A3B "80B in total and 3B activated", "79B non-embedding";
//   Qwen3.5-27B "27B"; gpt-oss (OpenAI's model card, table 1): gpt-oss-20b 20.91B total, 3.61B
//   active, gpt-oss-120b 116.83B total, 5.13B active — OpenAI counts active parameters without
//   the embedding (the unembedding counts);
// - transformers' own source for the per-layer state: a DeltaNet layer's cache is conv_states
//   [conv_dim, linear_conv_kernel_dim] with conv_dim = 2·k_heads·k_head_dim + v_heads·v_head_dim,
//   and recurrent_states [v_heads, k_head_dim, v_head_dim]; layer_types from
//   full_attention_interval (Qwen3NextConfig) or alternating from sliding (GptOssConfig).
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

double billions(double n, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(n / 1e9 * scale) / scale;
}

const TensorInfo& tensor(const TensorTree& t, const std::string& name) {
  const int i = t.find_tensor(name);
  REQUIRE_MESSAGE(i >= 0, name);
  return t.tensors[static_cast<std::size_t>(i)];
}

double numel(const TensorTree& t, const std::string& name) {
  return static_cast<double>(tensor(t, name).numel);
}

const ModelDims& dims_of(const Model& m) {
  const ModelDims* d = m.dims.get();
  REQUIRE(d != nullptr);
  return *d;
}

std::string real_config(const std::string& repo) {
  return test::read_text(*test::reference_dir() + "/real-hub/" + repo + "/config.json");
}

// gpt-oss-20b's real config with other sizes (gpt-oss-120b differs in layers and experts only).
std::string gpt_oss(int layers, int experts, bool with_layer_types) {
  std::string types;
  for (int i = 0; i < layers; ++i)
    types += std::string(i ? ", " : "") + (i % 2 == 0 ? "\"sliding_attention\"" : "\"full_attention\"");
  return R"({"model_type": "gpt_oss", "architectures": ["GptOssForCausalLM"], "attention_bias": true,
             "head_dim": 64, "hidden_size": 2880, "intermediate_size": 2880, "num_attention_heads": 64,
             "num_key_value_heads": 8, "num_experts_per_tok": 4, "vocab_size": 201088,
             "rope_theta": 150000, "sliding_window": 128, "torch_dtype": "bfloat16",
             "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096},
             "num_hidden_layers": )" +
         std::to_string(layers) + R"(, "num_local_experts": )" + std::to_string(experts) +
         (with_layer_types ? R"(, "layer_types": [)" + types + "]" : std::string()) + "}";
}

}  // namespace

TEST_CASE("qwen3_next: Qwen3-Next-80B-A3B's real config gives its card's 80B total, 79B non-embedding, 3B active") {
  if (!test::reference_dir()) return test::skip_loudly("Qwen3-Next-80B-A3B (real-hub config)");
  const Model m = model_of(real_config("Qwen--Qwen3-Next-80B-A3B-Thinking"), "Qwen/Qwen3-Next-80B-A3B-Thinking");
  CHECK(m.class_name() == "Qwen3NextForCausalLM");
  const double embeddings = numel(m.tree, "model.embed_tokens.weight") + numel(m.tree, "lm_head.weight");
  CHECK(billions(static_cast<double>(m.parameters), 0) == 80);
  CHECK(billions(static_cast<double>(m.parameters) - embeddings, 0) == 79);
  const ModelDims& d = dims_of(m);
  // "3B activated": the card's A3B, without the embeddings.
  CHECK(std::floor((active_parameters(m.tree, d) - embeddings) / 1e9) == 3);

  // Tensors as Qwen3NextGatedDeltaNet / Qwen3NextAttention / the sparse block register them.
  CHECK(tensor(m.tree, "model.layers.0.linear_attn.in_proj_qkvz.weight").shape == Shape{12288, 2048});
  CHECK(tensor(m.tree, "model.layers.0.linear_attn.in_proj_ba.weight").shape == Shape{64, 2048});
  CHECK(tensor(m.tree, "model.layers.0.linear_attn.conv1d.weight").shape == Shape{8192, 1, 4});
  CHECK(tensor(m.tree, "model.layers.0.linear_attn.norm.weight").shape == Shape{128});
  CHECK(tensor(m.tree, "model.layers.0.linear_attn.A_log").shape == Shape{32});
  CHECK(m.tree.find_module("model.layers.0.self_attn") < 0);
  CHECK(tensor(m.tree, "model.layers.3.self_attn.q_proj.weight").shape == Shape{8192, 2048});  // queries + gate
  CHECK(tensor(m.tree, "model.layers.3.self_attn.k_norm.weight").shape == Shape{256});
  CHECK(m.tree.find_module("model.layers.3.linear_attn") < 0);
  CHECK(tensor(m.tree, "model.layers.47.mlp.experts.511.down_proj.weight").shape == Shape{2048, 512});
  CHECK(tensor(m.tree, "model.layers.47.mlp.shared_expert_gate.weight").shape == Shape{1, 2048});
  CHECK(tensor(m.tree, "model.rotary_emb.inv_freq").shape == Shape{32});  // 256 × 0.25 rotated

  // full_attention_interval 4: layers 3, 7, ... attend; the others keep a DeltaNet state.
  REQUIRE(d.per_layer.size() == 48);
  for (std::size_t i = 0; i < 48; ++i) {
    INFO("layer " << i);
    const LayerDims& l = d.per_layer[i];
    if ((i + 1) % 4 == 0) {
      CHECK(l.attention == AttentionKind::kFull);
      CHECK(l.heads == 16);
      CHECK(l.kv_heads == 2);
      CHECK(l.k_head_dim == 256);
      CHECK(l.v_head_dim == 256);
      CHECK(l.rope.rotary_dims == 64);
      CHECK(l.rope.theta == 10000000.0);
    } else {
      CHECK(l.attention == AttentionKind::kRecurrent);
      CHECK(l.state.conv_state == (2 * 16 * 128 + 32 * 128) * 4);
      CHECK(l.state.ssm_state == 32 * 128 * 128);
      CHECK(l.k_head_dim == 128);
      CHECK(l.v_head_dim == 128);
    }
    CHECK(l.moe.experts == 512);
    CHECK(l.moe.active == 10);
    CHECK(l.moe.shared == 1);
    CHECK(l.moe.expert_width == 512);
    CHECK(l.moe.shared_width == 512);
  }
}

TEST_CASE("qwen3_next: a layer_types of the wrong length or kind is refused by name") {
  const std::string base = R"({"model_type": "qwen3_next", "num_hidden_layers": 4, "hidden_size": 256,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "num_experts": 4,
      "moe_intermediate_size": 32, "shared_expert_intermediate_size": 32, "vocab_size": 100, )";
  EstimateRequest req;
  req.config_text = base + R"("layer_types": ["linear_attention", "full_attention"]})";
  Result<Model> m = build_model(req);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().code() == ErrorCode::kInvalidValue);
  CHECK(m.error().message().find("'layer_types' has 2 entries for 4 layers") != std::string::npos);
  req.config_text = base + R"("layer_types": ["linear_attention", "full_attention", "conv", "full_attention"]})";
  m = build_model(req);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().message().find("'layer_types'[2] is 'conv'") != std::string::npos);
  // The legacy names transformers remaps: "mamba" is a DeltaNet layer, "attention" a full one.
  req.config_text = base + R"("layer_types": ["mamba", "attention", "mamba", "attention"]})";
  const Model ok = model_of(req.config_text);
  CHECK(ok.tree.find_module("layers.0.linear_attn") >= 0);
  CHECK(ok.tree.find_module("layers.1.self_attn") >= 0);
}

TEST_CASE("qwen3_5: Qwen3.5-27B's real config gives its card's 27B, a vision tower and the hybrid pattern") {
  if (!test::reference_dir()) return test::skip_loudly("Qwen3.5-27B (real-hub config)");
  const Model m = model_of(real_config("Qwen--Qwen3.5-27B"), "Qwen/Qwen3.5-27B");
  CHECK(m.class_name() == "Qwen3_5ForConditionalGeneration");
  CHECK(billions(static_cast<double>(m.parameters), 0) == 27);
  CHECK(tensor(m.tree, "model.language_model.layers.0.linear_attn.in_proj_qkv.weight").shape == Shape{10240, 5120});
  CHECK(tensor(m.tree, "model.language_model.layers.0.linear_attn.in_proj_a.weight").shape == Shape{48, 5120});
  CHECK(tensor(m.tree, "model.language_model.layers.3.self_attn.q_proj.weight").shape == Shape{12288, 5120});
  CHECK(tensor(m.tree, "model.visual.patch_embed.proj.weight").shape == Shape{1152, 3, 2, 16, 16});
  CHECK(tensor(m.tree, "model.visual.pos_embed.weight").shape == Shape{2304, 1152});
  CHECK(tensor(m.tree, "model.visual.blocks.26.mlp.linear_fc1.weight").shape == Shape{4304, 1152});
  CHECK(tensor(m.tree, "model.visual.merger.linear_fc2.weight").shape == Shape{5120, 4608});
  CHECK(tensor(m.tree, "lm_head.weight").shape == Shape{248320, 5120});
  const ModelDims& d = dims_of(m);
  REQUIRE(d.per_layer.size() == 64);
  CHECK(d.hidden == 5120);
  for (std::size_t i = 0; i < 64; ++i) {
    INFO("layer " << i);
    const LayerDims& l = d.per_layer[i];
    if ((i + 1) % 4 == 0) {
      CHECK(l.attention == AttentionKind::kFull);
      CHECK(l.kv_heads == 4);
      CHECK(l.k_head_dim == 256);
      CHECK(l.rope.rotary_dims == 64);  // rope_parameters.partial_rotary_factor 0.25
      CHECK(l.rope.theta == 10000000.0);
      CHECK_FALSE(l.rope.scaled);  // rope_type "default"
    } else {
      CHECK(l.attention == AttentionKind::kRecurrent);
      CHECK(l.state.conv_state == (2 * 16 * 128 + 48 * 128) * 4);
      CHECK(l.state.ssm_state == 48 * 128 * 128);
    }
    CHECK(l.moe.experts == 0);
  }
}

TEST_CASE("qwen3_5_moe: every layer is a sparse block with fused experts and a shared expert") {
  const Model m = model_of(R"({"model_type": "qwen3_5_moe", "architectures": ["Qwen3_5MoeForConditionalGeneration"],
      "text_config": {"model_type": "qwen3_5_moe_text", "hidden_size": 256, "num_hidden_layers": 4,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 1000,
        "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
        "shared_expert_intermediate_size": 48, "linear_num_key_heads": 2, "linear_num_value_heads": 4,
        "linear_key_head_dim": 16, "linear_value_head_dim": 16, "full_attention_interval": 2},
      "vision_config": {"depth": 1, "hidden_size": 64, "intermediate_size": 128, "num_heads": 2,
        "out_hidden_size": 256, "num_position_embeddings": 16}})");
  CHECK(tensor(m.tree, "model.language_model.layers.0.mlp.experts.gate_up_proj").shape == Shape{8, 64, 256});
  CHECK(tensor(m.tree, "model.language_model.layers.0.mlp.experts.down_proj").shape == Shape{8, 256, 32});
  CHECK(tensor(m.tree, "model.language_model.layers.3.mlp.gate.weight").shape == Shape{8, 256});
  CHECK(tensor(m.tree, "model.language_model.layers.3.mlp.shared_expert.up_proj.weight").shape == Shape{48, 256});
  CHECK(m.tree.find_module("model.language_model.layers.1.self_attn") >= 0);
  const ModelDims& d = dims_of(m);
  CHECK(d.experts == 8);
  CHECK(d.experts_per_token == 2);
  CHECK(d.intermediate == 2 * 32 + 48);
  CHECK(d.per_layer[0].attention == AttentionKind::kRecurrent);
  CHECK(d.per_layer[1].attention == AttentionKind::kFull);
}

TEST_CASE("qwen2_5_vl: Qwen2.5-VL-7B-Instruct's real config gives its real index's 8,292,166,656 parameters") {
  if (!test::reference_dir()) return test::skip_loudly("Qwen2.5-VL-7B-Instruct (real-hub config)");
  const Model m = model_of(real_config("Qwen--Qwen2.5-VL-7B-Instruct"), "Qwen/Qwen2.5-VL-7B-Instruct");
  CHECK(m.class_name() == "Qwen2_5_VLForConditionalGeneration");
  // The index's metadata.total_size, 16,584,333,312 bytes, at 2 bytes a parameter (bf16).
  CHECK(m.parameters == 16584333312ULL / 2);
  CHECK(tensor(m.tree, "visual.merger.mlp.0.weight").shape == Shape{5120, 5120});
  CHECK(tensor(m.tree, "model.layers.27.self_attn.q_proj.bias").shape == Shape{3584});
  const ModelDims& d = dims_of(m);
  REQUIRE(d.per_layer.size() == 28);
  CHECK(d.per_layer[27].attention == AttentionKind::kFull);  // use_sliding_window: false
  CHECK(d.kv_heads == 4);
  CHECK(d.head_dim == 128);
  CHECK_FALSE(d.per_layer[0].rope.scaled);  // "mrope" is the default rotary, split three ways
}

TEST_CASE("qwen2_vl: Qwen2-VL-7B-Instruct's dimensions give the Hub's 8.29B; its tower under its own names") {
  // Qwen/Qwen2-VL-7B-Instruct's public config.json (text keys at the top level, as 4.45 saved it).
  const Model m = model_of(R"({"model_type": "qwen2_vl", "architectures": ["Qwen2VLForConditionalGeneration"],
      "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28,
      "num_key_value_heads": 4, "vocab_size": 152064, "max_position_embeddings": 32768,
      "rope_theta": 1000000.0, "sliding_window": 32768, "use_sliding_window": false, "max_window_layers": 28,
      "tie_word_embeddings": false, "torch_dtype": "bfloat16",
      "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
      "vision_config": {"depth": 32, "embed_dim": 1280, "mlp_ratio": 4, "num_heads": 16, "in_chans": 3,
                        "hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2,
                        "spatial_patch_size": 14, "temporal_patch_size": 2}})",
                           "Qwen/Qwen2-VL-7B-Instruct");
  CHECK(billions(static_cast<double>(m.parameters), 2) == 8.29);
  CHECK(tensor(m.tree, "visual.blocks.31.mlp.fc1.weight").shape == Shape{5120, 1280});
  CHECK(tensor(m.tree, "visual.blocks.31.norm1.bias").shape == Shape{1280});
  CHECK(tensor(m.tree, "visual.merger.ln_q.bias").shape == Shape{1280});
  CHECK(tensor(m.tree, "visual.merger.mlp.2.weight").shape == Shape{3584, 5120});
  CHECK(tensor(m.tree, "model.layers.0.self_attn.k_proj.bias").shape == Shape{512});
  CHECK(m.tree.find_tensor("model.layers.0.self_attn.o_proj.bias") < 0);

  // Tied embeddings (Qwen2-VL-2B): the head is the embedding under the stored name.
  const Model tied = model_of(R"({"model_type": "qwen2_vl", "architectures": ["Qwen2VLForConditionalGeneration"],
      "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
      "num_key_value_heads": 2, "vocab_size": 1000, "tie_word_embeddings": true,
      "vision_config": {"depth": 1, "embed_dim": 64, "hidden_size": 256, "num_heads": 4}})");
  CHECK(tensor(tied.tree, "lm_head.weight").is_alias());
}

TEST_CASE("gpt_oss: gpt-oss-20b and -120b give OpenAI's published total and active counts") {
  struct Card {
    int layers, experts;
    double total, active;
  };
  for (const Card& card : {Card{24, 32, 20.91, 3.61}, Card{36, 128, 116.83, 5.13}}) {
    INFO(card.layers << " layers, " << card.experts << " experts");
    const Model m = model_of(gpt_oss(card.layers, card.experts, true));
    CHECK(m.class_name() == "GptOssForCausalLM");
    CHECK(billions(static_cast<double>(m.parameters), 2) == card.total);
    const double embed = numel(m.tree, "model.embed_tokens.weight");
    CHECK(billions(active_parameters(m.tree, dims_of(m)) - embed, 2) == card.active);
  }
}

TEST_CASE("gpt_oss: sinks, dequantized 3-D experts and the sliding/full alternation") {
  if (!test::reference_dir()) return test::skip_loudly("gpt-oss-20b (real-hub config)");
  const Model m = model_of(real_config("openai--gpt-oss-20b"), "openai/gpt-oss-20b");
  CHECK(tensor(m.tree, "model.layers.0.self_attn.sinks").shape == Shape{64});
  CHECK(tensor(m.tree, "model.layers.0.self_attn.o_proj.bias").shape == Shape{2880});
  CHECK(tensor(m.tree, "model.layers.0.mlp.router.bias").shape == Shape{32});
  CHECK(tensor(m.tree, "model.layers.23.mlp.experts.gate_up_proj").shape == Shape{32, 2880, 5760});
  CHECK(tensor(m.tree, "model.layers.23.mlp.experts.gate_up_proj_bias").shape == Shape{32, 5760});
  CHECK(tensor(m.tree, "model.layers.23.mlp.experts.down_proj").shape == Shape{32, 2880, 2880});
  const ModelDims& d = dims_of(m);
  REQUIRE(d.per_layer.size() == 24);
  CHECK(d.experts == 32);
  CHECK(d.experts_per_token == 4);
  for (std::size_t i = 0; i < 24; ++i) {
    INFO("layer " << i);
    const LayerDims& l = d.per_layer[i];
    CHECK(l.sinks);
    CHECK(l.attention == (i % 2 == 0 ? AttentionKind::kSliding : AttentionKind::kFull));
    CHECK(l.window == (i % 2 == 0 ? 128 : 0));
    CHECK(l.kv_heads == 8);
    CHECK(l.k_head_dim == 64);
    CHECK(l.rope.scaling_type == "yarn");
    CHECK(l.rope.factor == 32.0);
    CHECK(l.moe.experts == 32);
  }
  // Without layer_types, GptOssConfig alternates the same way (not every layer sliding, as the
  // generic sliding_window rule would have it).
  const Model alternating = model_of(gpt_oss(4, 4, false));
  const ModelDims& defaults = dims_of(alternating);
  CHECK(defaults.per_layer[0].attention == AttentionKind::kSliding);
  CHECK(defaults.per_layer[1].attention == AttentionKind::kFull);
  CHECK(defaults.per_layer[2].attention == AttentionKind::kSliding);
}
