#include "dec_common.h"

#include <cmath>

#include <fmt/format.h>

namespace memfit::arch::dec {

std::int64_t rotary_dims(const Config& c, std::int64_t head_dim, double factor,
                         const char* factor_key) {
  if (!std::isfinite(factor) || factor < 0.0 || factor > 1.0)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: '{}' must be a number in [0, 1], got {}", c.where(), factor_key,
                            factor));
  return static_cast<std::int64_t>(static_cast<double>(head_dim) * factor);
}

std::string rotary_class(const Config& c, std::string_view prefix) {
  const std::string type = rope_scaling_type(c);
  if (type == "linear") return fmt::format("{}LinearScalingRotaryEmbedding", prefix);
  if (type == "dynamic") return fmt::format("{}DynamicNTKScalingRotaryEmbedding", prefix);
  return fmt::format("{}RotaryEmbedding", prefix);
}

void rotary_per_layer(TreeBuilder& b, std::string_view name, std::string_view cls,
                      std::int64_t rot_dim, std::int64_t max_positions) {
  const std::int64_t half = (rot_dim + 1) / 2;
  auto s = b.module(name, cls);
  b.buffer("inv_freq", {half}, DType::kF32, false, BufferEra::kLegacyOnly);
  b.buffer("cos_cached", {max_positions, 2 * half}, DType::kF32, false, BufferEra::kLegacyOnly);
  b.buffer("sin_cached", {max_positions, 2 * half}, DType::kF32, false, BufferEra::kLegacyOnly);
}

void rotary_per_model(TreeBuilder& b, std::string_view name, std::string_view cls,
                      std::int64_t rot_dim) {
  auto s = b.module(name, cls);
  b.buffer("inv_freq", {(rot_dim + 1) / 2}, DType::kF32, false, BufferEra::kCurrentOnly);
}

void layer_norm_no_affine(TreeBuilder& b, std::string_view name) {
  auto s = b.module(name, "LayerNorm");
}

void tied_linear_with_bias(TreeBuilder& b, std::string_view name, const std::string& target_weight,
                           std::int64_t out) {
  auto s = b.module(name, "Linear");
  b.tied_param("weight", target_weight);
  b.param("bias", {out});
}

}  // namespace memfit::arch::dec
