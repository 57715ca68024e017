#include "layer_types.h"

#include <fmt/format.h>

namespace memfit::arch {
namespace {

bool known_type(const std::string& t) {
  return t == "full_attention" || t == "sliding_attention" || t == "chunked_attention";
}

// RoPE from one rope_parameters object: rope_theta, rope_type and factor, as read_rope reads
// rope_theta / rope_scaling.
RopeDims rope_from_parameters(const Json& p, double theta_default, std::int64_t rotary_dims) {
  RopeDims r;
  r.theta = theta_default;
  r.rotary_dims = rotary_dims;
  if (auto t = p.find("rope_theta"); t != p.end() && t->is_number()) r.theta = t->get<double>();
  if (auto t = p.find("rope_type"); t != p.end() && t->is_string()) {
    r.scaling_type = t->get<std::string>();
    r.scaled = r.scaling_type != "default";
  }
  if (auto f = p.find("factor"); f != p.end() && f->is_number()) r.factor = f->get<double>();
  return r;
}

}  // namespace

std::vector<std::string> layer_types_or(const Config& c, std::int64_t layers,
                                        std::vector<std::string> fallback) {
  std::vector<std::string> types = c.string_list({"layer_types"}).value_or(std::move(fallback));
  if (static_cast<std::int64_t>(types.size()) != layers)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: 'layer_types' has {} entries for {} layers", c.where(),
                            types.size(), layers));
  for (std::size_t i = 0; i < types.size(); ++i)
    if (!known_type(types[i]))
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: layer {} has type '{}'; expected 'full_attention', "
                              "'sliding_attention' or 'chunked_attention'", c.where(), i, types[i]));
  return types;
}

RopeDims rope_of_type(const Config& c, const std::string& layer_type, double theta_default,
                      std::int64_t rotary_dims) {
  const auto it = c.json().find("rope_parameters");
  if (it != c.json().end() && it->is_object()) {
    if (auto per = it->find(layer_type); per != it->end() && per->is_object())
      return rope_from_parameters(*per, theta_default, rotary_dims);
    if (it->contains("rope_theta") || it->contains("rope_type"))
      return rope_from_parameters(*it, theta_default, rotary_dims);
  }
  return read_rope(c, theta_default, rotary_dims);
}

void set_layer_kinds(ModelDims& d, const std::vector<std::string>& types, std::int64_t window,
                     const char* rule) {
  for (std::size_t i = 0; i < d.per_layer.size() && i < types.size(); ++i) {
    LayerDims& l = d.per_layer[i];
    l.window = 0;
    l.attention = AttentionKind::kFull;
    if (types[i] == "full_attention" || window <= 0) continue;
    l.attention = types[i] == "chunked_attention" ? AttentionKind::kChunked : AttentionKind::kSliding;
    l.window = window;
  }
  d.window_rule = rule;
}

}  // namespace memfit::arch
