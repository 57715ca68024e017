// Gemma 4 with vision and audio (transformers models/gemma4/modeling_gemma4.py and
// configuration_gemma4.py, transformers 5.5 / main): Gemma4ForConditionalGeneration, Gemma4Model
// (model_type gemma4), and its tower Gemma4VisionModel (gemma4_vision).
//
// Gemma4Model registers vision_tower (AutoModel of vision_config, absent when it is null),
// language_model (a Gemma4TextModel, gemma4_text.cpp), audio_tower and embed_vision /
// embed_audio (Gemma4MultimodalEmbedder: embedding_projection [text hidden, tower hidden], no
// bias, and a weightless pre-projection norm). Gemma4ForConditionalGeneration wraps it as `model`
// with an lm_head tied to the input embeddings (tie_word_embeddings, default True). Gemma 4 is a
// transformers 5 model: these are also the names its checkpoints store.
//
// Gemma4VisionModel: patch_embedder {input_proj [hidden, 3 × patch²], position_embedding_table
// [2, position_embedding_size, hidden]}, encoder {rotary_emb (inv_freq and original_inv_freq over
// head_dim / 2 per spatial axis), layers.N {self_attn {q/k/v/o as Gemma4ClippableLinear (a
// `linear` without bias, plus input/output min/max scalar buffers when use_clipped_linears),
// q_norm, k_norm, weightless v_norm}, mlp {gate/up/down clippable, act_fn}, the four Gemma
// norms}}, pooler (no tensors), std_bias / std_scale buffers when standardize.
//
// The audio tower (Gemma 4 E2B / E4B, `audio_config`): gemma4_audio.h's Gemma4AudioModel, and
// embed_audio projecting its output_proj_dims to the text hidden size.
#include <fmt/format.h>

#include "composite.h"
#include "families.h"
#include "gemma4_audio.h"

namespace memfit::arch {
namespace {

using gemma4::clippable;
using gemma4::norm;

// Gemma4VisionConfig defaults: hidden_size=768, intermediate_size=3072, 16 layers, 12 heads,
// 12 KV heads, head_dim=64, patch_size=16, position_embedding_size=10240.
TensorTree vision_tower(const Config& c) {
  const std::int64_t hidden = c.dim_or({"hidden_size"}, 768);
  const std::int64_t inter = c.dim_or({"intermediate_size"}, 3072);
  const std::int64_t layers = c.repeats_or({"num_hidden_layers"}, 16);
  const std::int64_t heads = c.dim_or({"num_attention_heads"}, 12);
  const std::int64_t kv_heads = c.dim_or({"num_key_value_heads"}, 12);
  const std::int64_t head_dim = c.dim_or({"head_dim"}, 64);
  const std::int64_t patch = c.dim_or({"patch_size"}, 16);
  const bool clipped = c.flag_or({"use_clipped_linears"}, false);
  const std::string act = c.string_or({"hidden_activation", "hidden_act"}, "gelu_pytorch_tanh");
  TreeBuilder b{"Gemma4VisionModel"};
  b.set_no_split({"Gemma4VisionEncoderLayer"});
  {
    auto p = b.module("patch_embedder", "Gemma4VisionPatchEmbedder");
    nn::linear(b, "input_proj", 3 * patch * patch, hidden, false);
    b.param("position_embedding_table", {2, c.dim_or({"position_embedding_size"}, 10240), hidden});
  }
  {
    auto e = b.module("encoder", "Gemma4VisionEncoder");
    {
      auto r = b.module("rotary_emb", "Gemma4VisionRotaryEmbedding");
      b.buffer("inv_freq", {head_dim / 4}, DType::kF32, false);
      b.buffer("original_inv_freq", {head_dim / 4}, DType::kF32, false);
    }
    auto list = b.module("layers", "ModuleList");
    for (std::int64_t i = 0; i < layers; ++i) {
      auto l = b.item(i, "Gemma4VisionEncoderLayer");
      {
        auto a = b.module("self_attn", "Gemma4VisionAttention");
        clippable(b, "q_proj", hidden, heads * head_dim, clipped);
        clippable(b, "k_proj", hidden, kv_heads * head_dim, clipped);
        clippable(b, "v_proj", hidden, kv_heads * head_dim, clipped);
        clippable(b, "o_proj", heads * head_dim, hidden, clipped);
        norm(b, "q_norm", head_dim);
        norm(b, "k_norm", head_dim);
        b.stateless("v_norm", "Gemma4RMSNorm");
      }
      {
        auto m = b.module("mlp", "Gemma4VisionMLP");
        clippable(b, "gate_proj", hidden, inter, clipped);
        clippable(b, "up_proj", hidden, inter, clipped);
        clippable(b, "down_proj", inter, hidden, clipped);
        nn::activation(b, "act_fn", act);
      }
      for (const char* n : {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                            "post_feedforward_layernorm"})
        norm(b, n, hidden);
    }
  }
  b.stateless("pooler", "Gemma4VisionPooler");
  if (c.flag_or({"standardize"}, false)) {
    b.buffer("std_bias", {hidden}, DType::kF32, true);
    b.buffer("std_scale", {hidden}, DType::kF32, true);
  }
  return b.finish();
}

void base_model(TreeBuilder& b, const BuildRequest& r, const Config& text, std::vector<std::string>& no_split) {
  const Config& c = r.config;
  const std::optional<Config> vision = c.sub("vision_config");
  const std::optional<Config> audio = c.sub("audio_config");
  const TensorTree lm = language_model(text, "gemma4_text", "AutoModel", r.model_name, r.dims);
  if (vision) graft(b, "vision_tower", vision_tower(*vision), no_split);
  graft(b, "language_model", lm, no_split);
  if (audio) graft(b, "audio_tower", gemma4::audio_tower(*audio), no_split);
  // Gemma4MultimodalEmbedder: embedding_projection [text hidden, the tower's output_proj_dims
  // (audio) or hidden_size (vision)] and a weightless pre-projection norm.
  const auto embedder = [&](const char* name, std::int64_t tower_width) {
    auto e = b.module(name, "Gemma4MultimodalEmbedder");
    nn::linear(b, "embedding_projection", tower_width, part_hidden(text, 2304), false);
    b.stateless("embedding_pre_projection_norm", "Gemma4RMSNorm");
  };
  if (vision) embedder("embed_vision", part_hidden(*vision, 768));
  if (audio) embedder("embed_audio", gemma4::audio_output_dims(*audio));
}

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  const Config text = part_config(c, "text_config");
  TreeBuilder b{std::string(r.class_name)};
  std::vector<std::string> no_split;
  if (r.class_name == "Gemma4Model") {
    base_model(b, r, text, no_split);
  } else if (r.class_name == "Gemma4ForConditionalGeneration") {
    {
      auto m = b.module("model", "Gemma4Model");
      base_model(b, r, text, no_split);
    }
    if (c.flag_or({"tie_word_embeddings"}, true))
      nn::tied_linear(b, "lm_head", "model.language_model.embed_tokens.weight");
    else
      nn::linear(b, "lm_head", part_hidden(text, 2304), text.dim_or({"vocab_size"}, 262144), false);
  } else {
    throw Error(ErrorCode::kUnknownClass, fmt::format("class '{}' is not described for gemma4", r.class_name));
  }
  b.set_no_split(std::move(no_split));
  return b.finish();
}

}  // namespace

const Family& gemma4_family() {
  static const Family f{"transformers",
                        {"gemma4"},
                        {{"Gemma4Model", "AutoModel"},
                         {"Gemma4ForConditionalGeneration", "AutoModelForImageTextToText"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
