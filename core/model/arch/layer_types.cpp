#include "layer_types.h"

#include <fmt/format.h>

namespace memfit::arch {
namespace {

bool known_type(const std::string& t) {
  return t == "full_attention" || t == "sliding_attention" || t == "chunked_attention";
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
  return read_rope(c, theta_default, rotary_dims, layer_type);
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
