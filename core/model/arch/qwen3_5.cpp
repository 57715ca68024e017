// Qwen3.5 and Qwen3.5-MoE (transformers models/qwen3_5/{modular,modeling,configuration}_qwen3_5.py
// and models/qwen3_5_moe/modular_qwen3_5_moe.py, main after 5.0): Qwen3_5Model,
// Qwen3_5ForConditionalGeneration (model_type qwen3_5); Qwen3_5TextModel, Qwen3_5ForCausalLM
// (qwen3_5_text); and the same four with Moe.
//
// A vision-language model: Qwen3_5ForConditionalGeneration = {model: Qwen3_5Model = {visual:
// Qwen3_5VisionModel (qwen_vision.h), language_model: Qwen3_5TextModel}, lm_head}, the text keys
// in `text_config`, the tower's in `vision_config`. The text model is Qwen3-Next's hybrid layer
// (qwen_hybrid.h) with the DeltaNet's split projections (in_proj_qkv, in_proj_z, in_proj_b,
// in_proj_a) and, in the dense model, Qwen3_5MLP(intermediate_size) in every layer. In the MoE
// model every layer's mlp is Qwen3_5MoeSparseMoeBlock: gate (a router holding weight
// [experts, hidden]), experts (gate_up_proj [experts, 2·moe_inter, hidden], down_proj
// [experts, hidden, moe_inter] and act_fn: the fused layout its checkpoints store), shared_expert
// and shared_expert_gate [1, hidden]. Checkpoints also carry multi-token-prediction layers
// (`mtp.*`), which _keys_to_ignore_on_load_unexpected drops: not in the tree.
// RoPE: rope_parameters (rope_theta, partial_rotary_factor 0.25, M-RoPE sections); the text
// rotary is Qwen3_5TextRotaryEmbedding with inv_freq [int(head_dim × factor) / 2].
#include <optional>
#include <string>
#include <vector>

#include "families.h"
#include "qwen_hybrid.h"
#include "qwen_vision.h"

namespace memfit::arch {
namespace {

struct Variant {
  std::string prefix;  // "Qwen3_5", "Qwen3_5Moe"
  bool moe;
};

struct MoeSizes {
  std::int64_t experts = 0, top_k = 0, moe_inter = 0, shared_inter = 0;
};

MoeSizes read_moe(const Config& c) {
  // Qwen3_5MoeTextConfig defaults (its moe widths are Qwen3NextConfig's).
  return {c.repeats_or({"num_experts"}, 256), c.count_or({"num_experts_per_tok"}, 8),
          c.dim_or({"moe_intermediate_size"}, 512), c.dim_or({"shared_expert_intermediate_size"}, 512)};
}

void fused_sparse_moe(TreeBuilder& b, const std::string& prefix, const DecoderDims& d, const MoeSizes& m) {
  auto block = b.module("mlp", prefix + "SparseMoeBlock");
  {
    auto gate = b.module("gate", prefix + "TopKRouter");
    b.param("weight", {m.experts, d.hidden});
  }
  {
    auto experts = b.module("experts", prefix + "Experts");
    b.param("gate_up_proj", {m.experts, 2 * m.moe_inter, d.hidden});
    b.param("down_proj", {m.experts, d.hidden, m.moe_inter});
    nn::activation(b, "act_fn", d.act);
  }
  gated_mlp(b, "shared_expert", prefix + "MLP", d.hidden, m.shared_inter, false, d.act);
  nn::linear(b, "shared_expert_gate", d.hidden, 1, false);
}

struct Text {
  DecoderDims d;
  hybrid::LinearAttentionDims la;
  std::vector<bool> linear;
  MoeSizes moe;
};

Text read_text(const Config& c, const Variant& v) {
  Text t;
  // Qwen3_5TextConfig / Qwen3_5MoeTextConfig defaults over Qwen3NextConfig's.
  t.d = v.moe ? hybrid::read_text_dims(c, {248320, 2048, 0, 40, 16, 2, 32768, false, 256})
              : hybrid::read_text_dims(c, {248320, 4096, 12288, 32, 16, 4, 32768, false, 256});
  t.la = hybrid::read_linear_attention(c);
  t.linear = hybrid::linear_layers(c, t.d.layers);
  if (v.moe) t.moe = read_moe(c);
  return t;
}

// The text model's contents (embed_tokens, layers, norm, rotary_emb) in the current module.
void text_model(TreeBuilder& b, const Variant& v, const Text& t) {
  LlamaLikeSpec s = hybrid::hybrid_spec(v.prefix);
  s.current_rotary = false;  // added below under its own class name
  decoder_base(
      b, s, t.d,
      [&](TreeBuilder& tb, std::int64_t) {
        if (v.moe) fused_sparse_moe(tb, v.prefix, t.d, t.moe);
        else gated_mlp(tb, "mlp", v.prefix + "MLP", t.d.hidden, t.d.inter, false, t.d.act);
      },
      [&](TreeBuilder& tb, std::int64_t layer) {
        hybrid::token_mixer(tb, s, t.d, t.la, hybrid::InProj::kSplit, t.linear[static_cast<std::size_t>(layer)]);
      });
  auto rot = b.module("rotary_emb", v.prefix + "TextRotaryEmbedding");
  b.buffer("inv_freq", {(t.d.current_rope_dim + 1) / 2}, DType::kF32, false, BufferEra::kCurrentOnly);
}

void lm_head(TreeBuilder& b, const DecoderDims& d, const std::string& embed) {
  if (d.tie) nn::tied_linear(b, "lm_head", embed);
  else nn::linear(b, "lm_head", d.hidden, d.vocab, false);
}

ModelDims text_dims(const Config& c, const Text& t, const Variant& v) {
  ModelDims m = hybrid::model_dims(t.d, read_rope(c, 10000.0, t.d.current_rope_dim), t.linear, t.la);
  if (v.moe) set_moe(m, {t.moe.experts, t.moe.top_k, 1, t.moe.moe_inter, t.moe.shared_inter}, false);
  return m;
}

TensorTree build(const BuildRequest& r, const Variant& v) {
  const Config& top = r.config;
  const Config c = text_config(top);
  Text t = read_text(c, v);
  t.d.tie = top.flag_or({"tie_word_embeddings"}, t.d.tie);
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({v.prefix + "DecoderLayer", v.prefix + "VisionBlock"});
  const std::string cls(r.class_name);
  if (cls == v.prefix + "TextModel") {
    text_model(b, v, t);
  } else if (cls == v.prefix + "ForCausalLM") {
    {
      auto m = b.module("model", v.prefix + "TextModel");
      text_model(b, v, t);
    }
    lm_head(b, t.d, "model.embed_tokens.weight");
  } else {
    const vision::VisionDims vis = vision::read_vision(vision::vision_config(top), vision::Generation::kQwen3_5);
    const bool head = cls == v.prefix + "ForConditionalGeneration";
    {
      std::optional<TreeBuilder::Scope> model;
      if (head) model.emplace(b.module("model", v.prefix + "Model"));
      vision::vision_tower(b, "visual", vis, vision::Generation::kQwen3_5);
      auto lm = b.module("language_model", v.prefix + "TextModel");
      text_model(b, v, t);
    }
    if (head) lm_head(b, t.d, "model.language_model.embed_tokens.weight");
  }
  if (r.dims) *r.dims = text_dims(c, t, v);
  return b.finish();
}

TensorTree build_dense(const BuildRequest& r) { return build(r, {"Qwen3_5", false}); }
TensorTree build_moe(const BuildRequest& r) { return build(r, {"Qwen3_5Moe", true}); }

}  // namespace

const Family& qwen3_5_family() {
  static const Family f{"transformers",
                        {"qwen3_5"},
                        {{"Qwen3_5Model", "AutoModel"},
                         {"Qwen3_5ForConditionalGeneration", "AutoModelForImageTextToText"}},
                        &build_dense};
  return f;
}

const Family& qwen3_5_text_family() {
  static const Family f{"transformers",
                        {"qwen3_5_text"},
                        {{"Qwen3_5TextModel", "AutoModel"}, {"Qwen3_5ForCausalLM", "AutoModelForCausalLM"}},
                        &build_dense};
  return f;
}

const Family& qwen3_5_moe_family() {
  static const Family f{"transformers",
                        {"qwen3_5_moe"},
                        {{"Qwen3_5MoeModel", "AutoModel"},
                         {"Qwen3_5MoeForConditionalGeneration", "AutoModelForImageTextToText"}},
                        &build_moe};
  return f;
}

const Family& qwen3_5_moe_text_family() {
  static const Family f{"transformers",
                        {"qwen3_5_moe_text"},
                        {{"Qwen3_5MoeTextModel", "AutoModel"},
                         {"Qwen3_5MoeForCausalLM", "AutoModelForCausalLM"}},
                        &build_moe};
  return f;
}

}  // namespace memfit::arch
