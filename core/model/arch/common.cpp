#include "common.h"

#include <fmt/format.h>

namespace memfit::arch {

void legacy_rotary(TreeBuilder& b, std::string_view name, std::string_view cls,
                   std::int64_t rot_dim, std::int64_t max_positions, std::string_view cos_name,
                   std::string_view sin_name) {
  auto s = b.module(name, cls);
  b.buffer("inv_freq", {rot_dim / 2}, DType::kF32, false, BufferEra::kLegacyOnly);
  if (!cos_name.empty()) {
    b.buffer(cos_name, {max_positions, rot_dim}, DType::kF32, false, BufferEra::kLegacyOnly);
    b.buffer(sin_name, {max_positions, rot_dim}, DType::kF32, false, BufferEra::kLegacyOnly);
  }
}

void current_rotary(TreeBuilder& b, std::string_view name, std::string_view cls,
                    std::int64_t rot_dim) {
  auto s = b.module(name, cls);
  b.buffer("inv_freq", {rot_dim / 2}, DType::kF32, false, BufferEra::kCurrentOnly);
}

void square_attention(TreeBuilder& b, std::string_view cls, const std::array<const char*, 4>& names,
                      std::int64_t dim, bool bias) {
  auto a = b.module("self_attn", cls);
  for (const char* n : names) nn::linear(b, n, dim, dim, bias);
}

void fc_mlp(TreeBuilder& b, std::string_view cls, std::int64_t dim, std::int64_t inter,
            std::string_view act_class) {
  auto m = b.module("mlp", cls);
  b.stateless("activation_fn", act_class);
  nn::linear(b, "fc1", dim, inter);
  nn::linear(b, "fc2", inter, dim);
}

void clip_style_encoder(TreeBuilder& b, std::string_view prefix, std::int64_t hidden,
                        std::int64_t inter, std::int64_t layers, std::string_view act) {
  const std::string p(prefix);
  auto enc = b.module("encoder", p + "Encoder");
  auto list = b.module("layers", "ModuleList");
  for (std::int64_t i = 0; i < layers; ++i) {
    auto l = b.item(i, p + "EncoderLayer");
    square_attention(b, p + "Attention", {"k_proj", "v_proj", "q_proj", "out_proj"}, hidden);
    nn::layer_norm(b, "layer_norm1", hidden);
    fc_mlp(b, p + "MLP", hidden, inter, nn::activation_class(act));
    nn::layer_norm(b, "layer_norm2", hidden);
  }
}

void require_divisible(const Config& c, std::int64_t a, const char* a_key, std::int64_t b,
                       const char* b_key) {
  if (b == 0 || a % b != 0)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: '{}' ({}) must be divisible by '{}' ({})", c.where(), a_key, a,
                            b_key, b));
}

std::int64_t head_dim(const Config& c, std::int64_t hidden, std::int64_t heads) {
  if (c.has("head_dim")) return c.dim({"head_dim"});
  require_divisible(c, hidden, "hidden_size", heads, "num_attention_heads");
  return hidden / heads;
}

std::int64_t num_labels(const Config& c) {
  // PretrainedConfig: id2label, when present, defines the labels; num_labels only builds a
  // default id2label.
  auto it = c.json().find("id2label");
  if (it != c.json().end() && it->is_object() && !it->empty())
    return static_cast<std::int64_t>(it->size());
  if (c.has("num_labels")) return c.dim({"num_labels"});
  return 2;
}

}  // namespace memfit::arch

namespace memfit::arch {

std::string rope_scaling_type(const Config& c) {
  // transformers 5 reads `rope_scaling` as an alias of `rope_parameters`, whose rope_type
  // "default" is no scaling class.
  auto it = c.json().find("rope_scaling");
  if (it == c.json().end() || it->is_null()) {
    const Json* p = rope_parameters_of(c, "full_attention");
    if (!p) return {};
    for (const char* k : {"rope_type", "type"})
      if (auto t = p->find(k); t != p->end() && t->is_string())
        return t->get<std::string>() == "default" ? std::string() : t->get<std::string>();
    return {};
  }
  auto rs = c.sub("rope_scaling");
  if (!rs) return {};
  return rs->string_or({"type", "rope_type"}, "");
}

double rope_number(const Config& c, const char* key, double fallback) {
  if (const Json* p = rope_parameters_of(c, "full_attention"))
    if (auto v = p->find(key); v != p->end() && v->is_number()) return v->get<double>();
  return c.number_or({key}, fallback);
}

std::optional<std::vector<std::string>> layer_types(const Config& c, std::int64_t layers) {
  auto types = c.string_list({"layer_types"});
  if (types && static_cast<std::int64_t>(types->size()) != layers)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: 'layer_types' has {} entries for {} layers ('num_hidden_layers')",
                            c.where(), types->size(), layers));
  return types;
}

}  // namespace memfit::arch
