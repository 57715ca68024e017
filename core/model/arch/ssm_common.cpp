#include "ssm_common.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace memfit::arch::ssm {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// mamba_d_head: "auto" (the default) is inner ÷ heads, which must divide; else the number given.
std::int64_t mamba_d_head(const Config& c, std::int64_t inner, const char* inner_key,
                          std::int64_t heads) {
  const auto it = c.json().find("mamba_d_head");
  if (it != c.json().end() && !(it->is_string() && *it == "auto")) return c.dim({"mamba_d_head"});
  require_divisible(c, inner, inner_key, heads, "mamba_n_heads");
  return inner / heads;
}

}  // namespace

void mamba1_tensors(TreeBuilder& b, const Mamba1Mixer& m) {
  nn::conv1d(b, "conv1d", m.inner, m.inner, m.conv_kernel, m.conv_bias, m.inner);
  nn::activation(b, "act", m.act);
  nn::linear(b, "in_proj", m.hidden, 2 * m.inner, m.proj_bias);
  nn::linear(b, "x_proj", m.inner, m.dt_rank + 2 * m.state, false);
  nn::linear(b, "dt_proj", m.dt_rank, m.inner, true);
  b.param("A_log", {m.inner, m.state});
  b.param("D", {m.inner});
  nn::linear(b, "out_proj", m.inner, m.hidden, m.proj_bias);
}

void mamba2_tensors(TreeBuilder& b, const Mamba2Mixer& m) {
  nn::activation(b, "act", m.act);
  nn::conv1d(b, "conv1d", m.conv_dim(), m.conv_dim(), m.conv_kernel, m.conv_bias, m.conv_dim());
  nn::linear(b, "in_proj", m.hidden, m.inner + m.conv_dim() + m.heads, m.in_bias);
  b.param("dt_bias", {m.heads});
  b.param("A_log", {m.heads});
  if (!m.norm_class.empty()) nn::rms_norm(b, "norm", m.inner, m.norm_class);
  b.param("D", {m.heads});
  nn::linear(b, "out_proj", m.inner, m.hidden, m.out_bias);
}

std::int64_t checked_mul(const Config& c, std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out) || out > kMaxDim)
    throw Error(ErrorCode::kOverflow,
                fmt::format("{}: {} ({} × {}) is too large to be a real model's size", c.where(), what,
                            a, b));
  return out;
}

void check_mixer(const Config& c, const Mamba2Mixer& m, const char* inner_key) {
  if (checked_mul(c, m.heads, m.head_dim, "the Mamba heads × head_dim") != m.inner)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: the Mamba heads ({}) × head_dim ({}) must equal {} ({})", c.where(),
                            m.heads, m.head_dim, inner_key, m.inner));
  // conv_dim = inner + 2 × groups × state stays below 3 × kMaxDim once groups × state fits.
  checked_mul(c, m.groups, m.state, "n_groups × the state size");
  checked_mul(c, m.conv_dim(), m.conv_kernel, "the convolution state");
  checked_mul(c, m.inner, m.state, "the SSM state");
}

Mamba2Mixer bamba_mixer(const Config& c, std::int64_t hidden, std::int64_t inner,
                        const char* inner_key, const std::string& act) {
  Mamba2Mixer m;
  m.hidden = hidden;
  m.inner = inner;
  m.heads = c.dim_or({"mamba_n_heads"}, 128);
  m.head_dim = mamba_d_head(c, m.inner, inner_key, m.heads);
  m.groups = c.dim_or({"mamba_n_groups"}, 1);
  m.state = c.dim_or({"mamba_d_state"}, 256);
  m.conv_kernel = c.dim_or({"mamba_d_conv"}, 4);
  m.conv_bias = c.flag_or({"mamba_conv_bias"}, true);
  m.in_bias = m.out_bias = c.flag_or({"mamba_proj_bias"}, false);
  m.act = act;
  check_mixer(c, m, inner_key);
  return m;
}

std::int64_t dt_rank(const Config& c, const char* key, std::int64_t hidden) {
  const auto it = c.json().find(key);
  if (it != c.json().end() && it->is_string()) {
    if (it->get<std::string>() != "auto")
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: '{}' must be a number or \"auto\", got \"{}\"", c.where(), key,
                              it->get<std::string>()));
    return (hidden + 15) / 16;
  }
  return c.dim_or({key}, (hidden + 15) / 16);
}

std::int64_t expanded(const Config& c, const char* expand_key, double expand_default,
                      std::int64_t hidden) {
  const double expand = c.number_or({expand_key}, expand_default);
  const double inner = std::floor(expand * static_cast<double>(hidden));
  if (!(inner >= 1.0 && inner <= static_cast<double>(kMaxDim)))
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: '{}' ({}) × hidden_size ({}) is not a valid width", c.where(),
                            expand_key, expand, hidden));
  return static_cast<std::int64_t>(inner);
}

std::int64_t mamba_inner(const Config& c, std::int64_t hidden, double expand_default) {
  if (c.has("intermediate_size")) return c.dim({"intermediate_size"});
  return expanded(c, "expand", expand_default, hidden);
}

LayerDims recurrent_layer(const RecurrentDims& state) {
  LayerDims l;
  l.attention = AttentionKind::kRecurrent;
  l.state = state;
  return l;
}

LayerDims attention_layer(std::int64_t heads, std::int64_t kv_heads, std::int64_t head_dim,
                          const RopeDims& rope) {
  LayerDims l;
  l.attention = AttentionKind::kFull;
  l.heads = heads;
  l.kv_heads = kv_heads;
  l.k_head_dim = l.v_head_dim = head_dim;
  l.rope = rope;
  return l;
}

LayerDims mlp_layer() {
  LayerDims l;
  l.attention = AttentionKind::kNone;
  return l;
}

ModelDims stack_dims(const StackSizes& s, std::vector<LayerDims> layers) {
  ModelDims d;
  d.hidden = s.hidden;
  d.vocab = s.vocab;
  d.layers = static_cast<std::int64_t>(layers.size());
  d.max_positions = s.positions;
  d.tied_embeddings = s.tie;
  d.norm_eps = s.norm_eps;
  const auto attn = std::find_if(layers.begin(), layers.end(),
                                 [](const LayerDims& l) { return l.kv_heads > 0; });
  if (attn != layers.end()) {
    d.heads = attn->heads;
    d.kv_heads = attn->kv_heads;
    d.head_dim = attn->k_head_dim;
  }
  for (const LayerDims& l : layers) d.intermediate = std::max(d.intermediate, l.intermediate);
  if (d.intermediate == 0) d.intermediate = s.mixer_width;
  d.per_layer = std::move(layers);
  return d;
}

void set_moe_layers(ModelDims& d, const MoeDims& moe, const std::vector<bool>& sparse) {
  if (std::find(sparse.begin(), sparse.end(), true) != sparse.end()) set_moe(d, moe, true, sparse);
}

namespace {

void base_model(TreeBuilder& b, const StackLayout& l, const BlockFn& block,
                FunctionRef<void(TreeBuilder&)> tail) {
  nn::embedding(b, l.embedding, l.vocab, l.hidden);
  {
    auto list = b.module("layers", "ModuleList");
    for (std::int64_t i = 0; i < l.layers; ++i) block(b, i);
  }
  nn::rms_norm(b, l.final_norm, l.hidden, l.norm_class);
  if (tail) tail(b);
}

}  // namespace

TensorTree build_stack(const BuildRequest& r, const StackLayout& l, const BlockFn& block,
                       FunctionRef<void(TreeBuilder&)> tail) {
  const Config& c = r.config;
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split(l.no_split);
  if (r.class_name == l.base_class) {
    base_model(b, l, block, tail);
    return b.finish();
  }
  {
    auto base = b.module(l.base_attr, l.base_class);
    base_model(b, l, block, tail);
  }
  if (ends_with(r.class_name, "ForCausalLM")) {
    if (l.tie) nn::tied_linear(b, "lm_head", l.base_attr + "." + l.embedding + ".weight");
    else nn::linear(b, "lm_head", l.hidden, l.vocab, false);
  } else if (ends_with(r.class_name, "ForSequenceClassification")) {
    nn::linear(b, "score", l.hidden, num_labels(c), false);
  } else {
    throw Error(ErrorCode::kUnknownClass,
                fmt::format("{}: no head for class '{}' over {}", c.where(), r.class_name,
                            l.base_class));
  }
  return b.finish();
}

}  // namespace memfit::arch::ssm
