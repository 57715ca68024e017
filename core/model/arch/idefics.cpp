// IDEFICS (transformers models/idefics/{modeling_idefics,vision,perceiver}.py, 4.40):
// IdeficsModel, IdeficsForVisionText2Text.
//
// A Llama-like decoder (IdeficsDecoupledEmbedding with `additional_vocab_size` extra rows in a
// child nn.Embedding), a CLIP-like vision tower, an optional perceiver resampler and one gated
// cross-attention layer per `cross_layer_interval` decoder layers. Every IdeficsAttention
// (self- and cross-attention alike) owns an IdeficsEmbedding rotary module built with the
// default max_position_embeddings=2048 (not the config's): inv_freq [head_dim/2] and
// cos_cached/sin_cached [2048, head_dim], float32, non-persistent. Current transformers still
// registers them per attention, so they are not era-specific. The vision embeddings register an
// int64 position_ids [1, num_positions] (non-persistent). The freeze_* flags only change
// requires_grad, never the tensors.
// Modules without tensors follow v4.40.0's modeling_idefics.py, vision.py and perceiver.py
// (huggingface/transformers tag v4.40.0, 745bbfe4), the same today: IdeficsMLP's act_fn, the
// gated layers' act_cross_attn/act_dense (nn.Tanh), IdeficsVisionMLP's activation_fn, the
// perceiver MLP's act (nn.ReLU). Every dropout there is a float.
#include <fmt/format.h>

#include "common.h"
#include "families.h"
#include "family_dims.h"

namespace memfit::arch {
namespace {

// IdeficsEmbedding(self.head_dim): the max_position_embeddings argument is never passed.
constexpr std::int64_t kRotaryPositions = 2048;

struct VisionDims {
  std::int64_t embed_dim, image_size, patch_size, channels, layers, heads, inter;
  std::string act;  // IdeficsVisionConfig.hidden_act: IdeficsVisionMLP.activation_fn
};

struct PerceiverDims {
  std::int64_t depth, heads, head_dim, latents;
  bool qk_layer_norms;
};

struct IdeficsDims {
  std::int64_t vocab, additional_vocab, hidden, inter, layers, heads, head_dim, cross_interval;
  bool qk_layer_norms, alpha_vector, use_resampler, tie;
  std::string act;  // IdeficsConfig.hidden_act: IdeficsMLP.act_fn
  VisionDims vision;
  PerceiverDims perceiver;
};

VisionDims read_vision(const Config& c) {
  VisionDims v{};
  v.embed_dim = c.dim_or({"hidden_size", "embed_dim"}, 768);
  v.image_size = c.dim_or({"image_size"}, 224);
  v.patch_size = c.dim_or({"patch_size"}, 14);
  v.channels = c.dim_or({"num_channels"}, 3);
  v.layers = c.repeats_or({"num_hidden_layers"}, 32);
  v.heads = c.dim_or({"num_attention_heads"}, 16);
  v.inter = c.dim_or({"intermediate_size"}, 5120);
  v.act = c.string_or({"hidden_act"}, "gelu");
  require_divisible(c, v.embed_dim, "embed_dim", v.heads, "num_attention_heads");
  return v;
}

PerceiverDims read_perceiver(const Config& c) {
  PerceiverDims p{};
  p.depth = c.repeats_or({"resampler_depth"}, 6);
  p.heads = c.dim_or({"resampler_n_heads"}, 16);
  p.head_dim = c.dim_or({"resampler_head_dim"}, 96);
  p.latents = c.dim_or({"resampler_n_latents"}, 64);
  p.qk_layer_norms = c.flag_or({"qk_layer_norms_perceiver"}, false);
  return p;
}

IdeficsDims read_dims(const Config& c) {
  IdeficsDims d{};
  d.vocab = c.dim_or({"vocab_size"}, 32000);
  d.additional_vocab = c.count_or({"additional_vocab_size"}, 0);
  d.hidden = c.dim_or({"hidden_size"}, 4096);
  d.inter = c.dim_or({"intermediate_size"}, 11008);
  d.layers = c.repeats_or({"num_hidden_layers"}, 32);
  d.heads = c.dim_or({"num_attention_heads"}, 32);
  require_divisible(c, d.hidden, "hidden_size", d.heads, "num_attention_heads");
  d.head_dim = d.hidden / d.heads;
  d.cross_interval = c.dim_or({"cross_layer_interval"}, 1);
  d.qk_layer_norms = c.flag_or({"qk_layer_norms"}, false);
  d.use_resampler = c.flag_or({"use_resampler"}, false);
  d.tie = c.flag_or({"tie_word_embeddings"}, false);
  d.act = c.string_or({"hidden_act"}, "silu");

  const std::string alpha_init = c.string_or({"alpha_initializer"}, "zeros");
  if (alpha_init != "zeros" && alpha_init != "ones" && alpha_init != "normal" &&
      alpha_init != "gaussian" && alpha_init != "random")
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: 'alpha_initializer' is '{}': expected zeros, ones, normal, "
                            "gaussian or random",
                            c.where(), alpha_init));
  const std::string alpha_type = c.string_or({"alpha_type"}, "float");
  if (alpha_type != "float" && alpha_type != "vector")
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: 'alpha_type' is '{}': expected float or vector", c.where(),
                            alpha_type));
  d.alpha_vector = alpha_type == "vector";

  // IdeficsConfig builds IdeficsVisionConfig() / IdeficsPerceiverConfig() when absent.
  const Json empty = Json::object();
  if (auto v = c.sub("vision_config")) d.vision = read_vision(*v);
  else d.vision = read_vision(Config(empty, c.where() + ": vision_config"));
  if (auto p = c.sub("perceiver_config")) d.perceiver = read_perceiver(*p);
  else d.perceiver = read_perceiver(Config(empty, c.where() + ": perceiver_config"));
  return d;
}

// IdeficsAttention: q/k/v/o without bias (k/v read the vision embed_dim for cross-attention),
// the rotary module, then the optional per-head RMS norms.
void attention(TreeBuilder& b, std::string_view name, const IdeficsDims& d, bool cross) {
  auto s = b.module(name, "IdeficsAttention");
  const std::int64_t inner = d.heads * d.head_dim;
  const std::int64_t kv_in = cross ? d.vision.embed_dim : d.hidden;
  nn::linear(b, "q_proj", d.hidden, inner, false);
  nn::linear(b, "k_proj", kv_in, inner, false);
  nn::linear(b, "v_proj", kv_in, inner, false);
  nn::linear(b, "o_proj", inner, d.hidden, false);
  {
    auto r = b.module("rotary_emb", "IdeficsEmbedding");
    b.buffer("inv_freq", {d.head_dim / 2}, DType::kF32, false);
    b.buffer("cos_cached", {kRotaryPositions, d.head_dim}, DType::kF32, false);
    b.buffer("sin_cached", {kRotaryPositions, d.head_dim}, DType::kF32, false);
  }
  // Only the cross-attention layers pass qk_layer_norms=config.qk_layer_norms.
  if (cross && d.qk_layer_norms) {
    nn::rms_norm(b, "q_layer_norm", d.head_dim, "IdeficsRMSNorm");
    nn::rms_norm(b, "k_layer_norm", d.head_dim, "IdeficsRMSNorm");
  }
}

void mlp(TreeBuilder& b, const IdeficsDims& d) {
  auto s = b.module("mlp", "IdeficsMLP");
  nn::linear(b, "gate_proj", d.hidden, d.inter, false);
  nn::linear(b, "down_proj", d.inter, d.hidden, false);
  nn::linear(b, "up_proj", d.hidden, d.inter, false);
  nn::activation(b, "act_fn", d.act);
}

void vision_model(TreeBuilder& b, const VisionDims& v) {
  auto s = b.module("vision_model", "IdeficsVisionTransformer");
  {
    auto e = b.module("embeddings", "IdeficsVisionEmbeddings");
    const std::int64_t side = v.image_size / v.patch_size;
    const std::int64_t positions = side * side + 1;
    b.param("class_embedding", {v.embed_dim});
    nn::conv2d(b, "patch_embedding", v.channels, v.embed_dim, v.patch_size, v.patch_size, false);
    nn::embedding(b, "position_embedding", positions, v.embed_dim);
    b.buffer("position_ids", {1, positions}, DType::kI64, false);
  }
  nn::layer_norm(b, "pre_layrnorm", v.embed_dim);
  {
    auto enc = b.module("encoder", "IdeficsVisionEncoder");
    auto layers = b.module("layers", "ModuleList");
    for (std::int64_t i = 0; i < v.layers; ++i) {
      auto l = b.item(i, "IdeficsVisionEncoderLayer");
      {
        auto a = b.module("self_attn", "IdeficsVisionAttention");
        nn::linear(b, "k_proj", v.embed_dim, v.embed_dim);
        nn::linear(b, "v_proj", v.embed_dim, v.embed_dim);
        nn::linear(b, "q_proj", v.embed_dim, v.embed_dim);
        nn::linear(b, "out_proj", v.embed_dim, v.embed_dim);
      }
      nn::layer_norm(b, "layer_norm1", v.embed_dim);
      {
        auto m = b.module("mlp", "IdeficsVisionMLP");
        nn::activation(b, "activation_fn", v.act);
        nn::linear(b, "fc1", v.embed_dim, v.inter);
        nn::linear(b, "fc2", v.inter, v.embed_dim);
      }
      nn::layer_norm(b, "layer_norm2", v.embed_dim);
    }
  }
  nn::layer_norm(b, "post_layernorm", v.embed_dim);
}

// IdeficsPerceiverResampler(config, vision embed_dim, depth, n_heads, head_dim, n_latents).
void perceiver(TreeBuilder& b, const IdeficsDims& d) {
  const std::int64_t dim = d.vision.embed_dim;
  const PerceiverDims& p = d.perceiver;
  const std::int64_t inner = p.heads * p.head_dim;
  const std::int64_t mlp_dim = 4 * dim;  // 4 * config.vision_config.embed_dim
  auto s = b.module("perceiver_resampler", "IdeficsPerceiverResampler");
  b.param("latents", {p.latents, dim});
  {
    auto blocks = b.module("blocks", "ModuleList");
    for (std::int64_t i = 0; i < p.depth; ++i) {
      auto blk = b.item(i, "ModuleList");
      {
        auto a = b.module("0", "IdeficsPerceiverAttention");
        nn::layer_norm(b, "context_layer_norm", dim);
        nn::layer_norm(b, "latents_layer_norm", dim);
        if (p.qk_layer_norms) {
          nn::layer_norm(b, "q_layer_norm", p.head_dim);
          nn::layer_norm(b, "k_layer_norm", p.head_dim);
        }
        nn::linear(b, "q_proj", dim, inner, false);
        nn::linear(b, "k_proj", dim, inner, false);
        nn::linear(b, "v_proj", dim, inner, false);
        nn::linear(b, "output_proj", inner, dim, false);
      }
      {
        auto m = b.module("1", "IdeficsMLP");
        nn::layer_norm(b, "ln", dim);
        nn::linear(b, "fc", dim, mlp_dim, false);
        b.stateless("act", "ReLU");
        nn::linear(b, "c_proj", mlp_dim, dim, false);
      }
    }
  }
  nn::layer_norm(b, "layer_norm", dim);
}

void model(TreeBuilder& b, const IdeficsDims& d) {
  {
    auto e = b.module("embed_tokens", "IdeficsDecoupledEmbedding");
    b.param("weight", {d.vocab, d.hidden});
    if (d.additional_vocab > 0)
      nn::embedding(b, "additional_embedding", d.additional_vocab, d.hidden);
  }
  vision_model(b, d.vision);
  if (d.use_resampler) perceiver(b, d);
  {
    auto layers = b.module("layers", "ModuleList");
    for (std::int64_t i = 0; i < d.layers; ++i) {
      auto l = b.item(i, "IdeficsDecoderLayer");
      attention(b, "self_attn", d, false);
      mlp(b, d);
      nn::rms_norm(b, "input_layernorm", d.hidden, "IdeficsRMSNorm");
      nn::rms_norm(b, "post_attention_layernorm", d.hidden, "IdeficsRMSNorm");
    }
  }
  {
    auto cross = b.module("gated_cross_attn_layers", "ModuleList");
    const std::int64_t n = d.layers / d.cross_interval;
    const Shape alpha = d.alpha_vector ? Shape{1, 1, d.hidden} : Shape{1};
    for (std::int64_t i = 0; i < n; ++i) {
      auto l = b.item(i, "IdeficsGatedCrossAttentionLayer");
      attention(b, "cross_attn", d, true);
      mlp(b, d);
      nn::rms_norm(b, "input_layernorm", d.hidden, "IdeficsRMSNorm");
      nn::rms_norm(b, "post_attention_layernorm", d.hidden, "IdeficsRMSNorm");
      b.stateless("act_cross_attn", "Tanh");
      b.stateless("act_dense", "Tanh");
      b.param("alpha_cross_attn", alpha);
      b.param("alpha_dense", alpha);
    }
  }
  nn::rms_norm(b, "norm", d.hidden, "IdeficsRMSNorm");
}

TensorTree tree(const BuildRequest& r, const IdeficsDims& d) {
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({"IdeficsDecoderLayer", "IdeficsGatedCrossAttentionLayer"});
  if (is_class(r, "IdeficsModel")) {
    model(b, d);
    return b.finish();
  }
  {
    auto m = b.module("model", "IdeficsModel");
    model(b, d);
  }
  // IdeficsDecoupledLinear(hidden, vocab, additional_vocab, bias=False). Its tie_weights override
  // ties weight to embed_tokens.weight and additional_fc to additional_embedding.
  auto head = b.module("lm_head", "IdeficsDecoupledLinear");
  if (d.tie) b.tied_param("weight", "model.embed_tokens.weight");
  else b.param("weight", {d.vocab, d.hidden});
  if (d.additional_vocab > 0) {
    if (d.tie) {
      nn::tied_linear(b, "additional_fc", "model.embed_tokens.additional_embedding.weight");
    } else {
      nn::linear(b, "additional_fc", d.hidden, d.additional_vocab, false);
    }
  }
  return b.finish();
}

// The model's dims from the same reads (family_dims.h): the language model's layers (the gated
// cross-attention layers and the vision tower are not in them) and vocab_size without the
// additional_vocab_size tokens, as the generic reader gave them. IdeficsConfig
// (configuration_idefics.py, 4.40): rms_norm_eps=1e-6, and no max_position_embeddings of its
// own (the Hub configs carry one; the rotary caches use 2048 whatever it says): 0 when absent.
ModelDims model_dims(const Config& c, const IdeficsDims& d) {
  return uniform_model_dims(c, {d.hidden, d.vocab, d.layers, d.heads, d.heads, d.head_dim, d.inter,
                                c.count_or({"max_position_embeddings"}, 0), d.tie,
                                read_norm_eps(c, {"rms_norm_eps"}, 1e-6)});
}

TensorTree build(const BuildRequest& r) {
  return build_with_dims(r, read_dims(r.config), tree, model_dims);
}

}  // namespace

const Family& idefics_family() {
  static const Family f{"transformers",
                        {"idefics"},
                        {{"IdeficsModel", "AutoModel"},
                         {"IdeficsForVisionText2Text", "AutoModelForPreTraining"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
