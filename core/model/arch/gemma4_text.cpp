// Gemma 4's text model (transformers models/gemma4/modeling_gemma4.py and
// configuration_gemma4.py, transformers 5.5 / main): Gemma4TextModel, Gemma4ForCausalLM
// (model_type gemma4_text; gemma4.cpp's Gemma4ForConditionalGeneration holds it as
// model.language_model).
//
// Gemma 3's layer (four norms, GeGLU MLP, q/k RMSNorm) with, per Gemma4TextConfig:
// - sliding and global layers of different shapes: `layer_types` (default: every 6th layer
//   global, and the last one always), global layers with head_dim = global_head_dim (512) and,
//   when attention_k_eq_v, num_global_key_value_heads KV heads and no v_proj (V is K);
//   v_norm is a Gemma4RMSNorm without weight;
// - KV sharing: the last num_kv_shared_layers layers reuse the K/V of the last earlier layer of
//   their type, so they have neither k/v projections nor k/v norms, and cache nothing; with
//   use_double_wide_mlp their MLP is twice intermediate_size;
// - per-layer embeddings (PLE) when hidden_size_per_layer_input > 0 (default 256): the model
//   adds embed_tokens_per_layer [vocab_size_per_layer_input, layers × PLE],
//   per_layer_model_projection and per_layer_projection_norm after rotary_emb, each layer an
//   act_fn, per_layer_input_gate, per_layer_projection and post_per_layer_input_norm;
// - enable_moe_block: each layer keeps its dense MLP and adds router {norm without weight,
//   proj [experts, hidden], scale [hidden], per_expert_scale [experts]}, experts {gate_up_proj
//   [experts, 2 × moe_intermediate_size, hidden], down_proj [experts, hidden,
//   moe_intermediate_size], act_fn} and three more norms — the dense MLP is the "shared expert"
//   the model cards count;
// - a persistent layer_scalar [1] buffer per layer (it is in the checkpoints).
// RoPE per layer type from rope_parameters (sliding: theta 10k; global: "proportional", theta
// 1M, partial_rotary_factor 0.25 of the global head_dim).
#include <algorithm>

#include <fmt/format.h>

#include "families.h"
#include "layer_types.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

struct Gemma4Dims {
  DecoderDims d;
  std::vector<std::string> types;
  std::int64_t global_head_dim, global_kv_heads, window;
  bool k_eq_v;
  std::int64_t first_shared;  // first KV-shared layer (layers when none)
  bool double_wide;
  std::int64_t ple, ple_vocab;  // per-layer input width (0: none) and its vocabulary
  bool moe;
  std::int64_t experts, top_k, moe_inter;

  bool global(std::int64_t i) const { return types[static_cast<std::size_t>(i)] == "full_attention"; }
  bool shared(std::int64_t i) const { return i >= first_shared; }
  std::int64_t head_dim(std::int64_t i) const { return global(i) ? global_head_dim : d.head_dim; }
  bool no_v_proj(std::int64_t i) const { return global(i) && k_eq_v; }
  std::int64_t kv_heads(std::int64_t i) const { return no_v_proj(i) ? global_kv_heads : d.kv_heads; }
};

// Gemma4TextConfig's default pattern: every 6th layer global, and the last one always.
std::vector<std::string> default_types(std::int64_t layers) {
  std::vector<std::string> t;
  for (std::int64_t i = 0; i < layers; ++i) t.push_back((i + 1) % 6 ? "sliding_attention" : "full_attention");
  return t;
}

Gemma4Dims read_dims(const Config& c) {
  Gemma4Dims g;
  // Gemma4TextConfig defaults.
  g.d = read_decoder_dims(c, {262144, 2304, 9216, 30, 8, 4, 131072, true, /*head_dim=*/256});
  g.d.q_bias = g.d.k_bias = g.d.v_bias = g.d.o_bias = c.flag_or({"attention_bias"}, false);
  g.d.act = c.string_or({"hidden_activation", "hidden_act"}, "gelu_pytorch_tanh");
  g.types = layer_types_or(c, g.d.layers, default_types(g.d.layers));
  if (!g.types.empty()) g.types.back() = "full_attention";  // "Forcing last layer to full_attention"
  g.global_head_dim = c.dim_or({"global_head_dim"}, 512);
  g.k_eq_v = c.flag_or({"attention_k_eq_v"}, false);
  g.global_kv_heads = c.has("num_global_key_value_heads") ? c.dim({"num_global_key_value_heads"}) : g.d.kv_heads;
  g.window = c.dim_or({"sliding_window"}, 512);
  const std::int64_t shared = c.count_or({"num_kv_shared_layers"}, 0);
  if (shared > g.d.layers)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: 'num_kv_shared_layers' ({}) exceeds 'num_hidden_layers' ({})",
                            c.where(), shared, g.d.layers));
  g.first_shared = shared > 0 ? g.d.layers - shared : g.d.layers;
  g.double_wide = c.flag_or({"use_double_wide_mlp"}, false);
  g.ple = c.count_or({"hidden_size_per_layer_input"}, 256);
  g.ple_vocab = c.dim_or({"vocab_size_per_layer_input"}, 262144);
  g.moe = c.flag_or({"enable_moe_block"}, false);
  if (g.moe) {
    g.experts = c.repeats_or({"num_experts"}, 0);
    g.top_k = c.count({"top_k_experts"});
    g.moe_inter = c.dim({"moe_intermediate_size"});
    if (g.experts == 0)
      throw Error(ErrorCode::kMissingKey,
                  fmt::format("{}: 'enable_moe_block' is true but 'num_experts' is missing", c.where()));
  }
  return g;
}

void norm(TreeBuilder& b, std::string_view name, std::int64_t dim) {
  nn::rms_norm(b, name, dim, "Gemma4RMSNorm");
}

void attention(TreeBuilder& b, const Gemma4Dims& g, std::int64_t i) {
  const DecoderDims& d = g.d;
  const std::int64_t hd = g.head_dim(i);
  auto a = b.module("self_attn", "Gemma4TextAttention");
  nn::linear(b, "q_proj", d.hidden, d.heads * hd, d.q_bias);
  norm(b, "q_norm", hd);
  if (!g.shared(i)) {
    norm(b, "k_norm", hd);
    b.stateless("v_norm", "Gemma4RMSNorm");  // with_scale=False
    nn::linear(b, "k_proj", d.hidden, g.kv_heads(i) * hd, d.k_bias);
    if (!g.no_v_proj(i)) nn::linear(b, "v_proj", d.hidden, g.kv_heads(i) * hd, d.v_bias);
  }
  nn::linear(b, "o_proj", d.heads * hd, d.hidden, d.o_bias);
}

void decoder_layer(TreeBuilder& b, const Gemma4Dims& g, std::int64_t i) {
  const DecoderDims& d = g.d;
  auto l = b.item(i, "Gemma4TextDecoderLayer");
  attention(b, g, i);
  const std::int64_t inter = d.inter * (g.double_wide && g.shared(i) ? 2 : 1);
  gated_mlp(b, "mlp", "Gemma4TextMLP", d.hidden, inter, false, d.act);
  for (const char* n : {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                        "post_feedforward_layernorm"})
    norm(b, n, d.hidden);
  b.buffer("layer_scalar", {1}, DType::kF32, true);
  if (g.ple > 0) {
    nn::activation(b, "act_fn", d.act);
    nn::linear(b, "per_layer_input_gate", d.hidden, g.ple, false);
    nn::linear(b, "per_layer_projection", g.ple, d.hidden, false);
    norm(b, "post_per_layer_input_norm", d.hidden);
  }
  if (g.moe) {
    {
      auto r = b.module("router", "Gemma4TextRouter");
      b.stateless("norm", "Gemma4RMSNorm");
      nn::linear(b, "proj", d.hidden, g.experts, false);
      b.param("scale", {d.hidden});
      b.param("per_expert_scale", {g.experts});
    }
    {
      auto e = b.module("experts", "Gemma4TextExperts");
      b.param("gate_up_proj", {g.experts, 2 * g.moe_inter, d.hidden});
      b.param("down_proj", {g.experts, d.hidden, g.moe_inter});
      nn::activation(b, "act_fn", d.act);
    }
    for (const char* n : {"post_feedforward_layernorm_1", "post_feedforward_layernorm_2",
                          "pre_feedforward_layernorm_2"})
      norm(b, n, d.hidden);
  }
}

void scaled_embedding(TreeBuilder& b, std::string_view name, std::int64_t rows, std::int64_t dim) {
  auto e = b.module(name, "Gemma4TextScaledWordEmbedding");
  b.param("weight", {rows, dim});
  b.buffer("embed_scale", {}, DType::kF32, false, BufferEra::kCurrentOnly);
}

void text_model(TreeBuilder& b, const Gemma4Dims& g) {
  const DecoderDims& d = g.d;
  scaled_embedding(b, "embed_tokens", d.vocab, d.hidden);
  {
    auto list = b.module("layers", "ModuleList");
    for (std::int64_t i = 0; i < d.layers; ++i) decoder_layer(b, g, i);
  }
  norm(b, "norm", d.hidden);
  {
    // One inv_freq (and its original copy) per layer type; a global layer's proportional RoPE
    // spans the global head_dim.
    auto r = b.module("rotary_emb", "Gemma4TextRotaryEmbedding");
    std::vector<std::string> seen;
    for (std::int64_t i = 0; i < d.layers; ++i) {
      const std::string& t = g.types[static_cast<std::size_t>(i)];
      if (std::find(seen.begin(), seen.end(), t) != seen.end()) continue;
      seen.push_back(t);
      const std::int64_t half = g.head_dim(i) / 2;
      b.buffer(t + "_inv_freq", {half}, DType::kF32, false, BufferEra::kCurrentOnly);
      b.buffer(t + "_original_inv_freq", {half}, DType::kF32, false, BufferEra::kCurrentOnly);
    }
  }
  if (g.ple > 0) {
    scaled_embedding(b, "embed_tokens_per_layer", g.ple_vocab, d.layers * g.ple);
    nn::linear(b, "per_layer_model_projection", d.hidden, d.layers * g.ple, false);
    norm(b, "per_layer_projection_norm", g.ple);
  }
}

// Per layer: its kind and window, its K/V heads and widths, its RoPE, MoE; shared layers cache
// nothing of their own.
void fill_dims(ModelDims& m, const Config& c, const Gemma4Dims& g) {
  const double partial = [&] {
    const auto rp = c.json().find("rope_parameters");
    if (rp != c.json().end() && rp->is_object())
      if (auto full = rp->find("full_attention"); full != rp->end() && full->is_object())
        if (auto f = full->find("partial_rotary_factor"); f != full->end() && f->is_number()) return f->get<double>();
    return c.has("rope_parameters") ? 1.0 : 0.25;  // Gemma4TextConfig's default rope_parameters
  }();
  set_layer_kinds(m, g.types, g.window, "layer_types");
  for (std::int64_t i = 0; i < g.d.layers; ++i) {
    LayerDims& l = m.per_layer[static_cast<std::size_t>(i)];
    l.kv_heads = g.kv_heads(i);
    l.k_head_dim = l.v_head_dim = g.head_dim(i);
    l.rope = g.global(i)
                 ? rope_of_type(c, "full_attention", 1e6,
                                static_cast<std::int64_t>(static_cast<double>(g.global_head_dim) * partial))
                 : rope_of_type(c, "sliding_attention", 1e4, g.d.head_dim);
    if (g.shared(i)) {
      l.attention = AttentionKind::kNone;  // reads an earlier layer's cache
      l.window = 0;
    }
    if (g.double_wide && g.shared(i)) l.intermediate = 2 * g.d.inter;
  }
  if (g.moe)
    set_moe(m, {g.experts, g.top_k, 1, g.moe_inter, g.d.inter}, true);
}

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  const Gemma4Dims g = read_dims(c);
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({"Gemma4TextDecoderLayer"});
  if (r.class_name == "Gemma4TextModel") {
    text_model(b, g);
  } else if (r.class_name == "Gemma4ForCausalLM") {
    {
      auto m = b.module("model", "Gemma4TextModel");
      text_model(b, g);
    }
    if (g.d.tie) nn::tied_linear(b, "lm_head", "model.embed_tokens.weight");
    else nn::linear(b, "lm_head", g.d.hidden, g.d.vocab, false);
  } else {
    throw Error(ErrorCode::kUnknownClass,
                fmt::format("class '{}' is not described for gemma4_text", r.class_name));
  }
  if (r.dims) {
    *r.dims = decoder_model_dims(c, g.d, rope_of_type(c, "sliding_attention", 1e4, g.d.head_dim));
    (*r.dims)->attention_error.reset();  // the layer kinds are Gemma 4's own (fill_dims)
    fill_dims(**r.dims, c, g);
  }
  return b.finish();
}

}  // namespace

const Family& gemma4_text_family() {
  static const Family f{"transformers",
                        {"gemma4_text"},
                        {{"Gemma4TextModel", "AutoModel"}, {"Gemma4ForCausalLM", "AutoModelForCausalLM"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
