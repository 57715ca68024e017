// RoPE scaling (transformers 5.0 modeling_rope_utils.py). Python's `s / t` on a tensor is
// t.reciprocal() * s (torch/_tensor.py __rdiv__), so the same is written here where the source
// divides a number by a tensor: the same float32 roundings.
#include "rope.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "failure.h"

namespace memfit::torchrt {
namespace {

const at::TensorOptions kF32 = at::TensorOptions().dtype(at::kFloat);

// arange(0, dim, 2, int64).float() / dim
at::Tensor freq_exponents(std::int64_t dim) {
  return at::arange(0, dim, 2, at::TensorOptions().dtype(at::kLong)).to(at::kFloat) / static_cast<double>(dim);
}

// _compute_default_rope_parameters: 1.0 / (base ** exponents)
at::Tensor default_inv_freq(double base, std::int64_t dim) {
  return at::reciprocal(at::pow(base, freq_exponents(dim)));
}

[[noreturn]] void bad(const RopeSpec& r, const std::string& what) {
  throw Failure{FailureKind::kInvalidInput,
                fmt::format("{}: rope_scaling (rope_type '{}'): {}", r.where, r.dims.scaling_type, what)};
}

double required(const RopeSpec& r, const char* key) {
  const auto v = r.dims.param(key);
  if (!v) bad(r, fmt::format("'{}' is required", key));
  return *v;
}

// `factor`, which every scaled type but LongRoPE requires (read_rope defaults it to 1).
double factor_of(const RopeSpec& r) {
  if (!r.dims.param("factor")) bad(r, "'factor' is required");
  return r.dims.factor;
}

// _compute_dynamic_ntk_parameters: base * ((factor * seq_len / max_pos) - (factor - 1)) ** (dim / (dim - 2)),
// seq_len at least max_position_embeddings.
at::Tensor dynamic_inv_freq(const RopeSpec& r, std::int64_t seq_len) {
  const double factor = factor_of(r);
  const auto dim = r.dim();
  const double max_pos = static_cast<double>(r.max_positions);
  const double seq = std::max(static_cast<double>(seq_len), max_pos);
  const double base = r.dims.theta * std::pow((factor * seq / max_pos) - (factor - 1),
                                              static_cast<double>(dim) / static_cast<double>(dim - 2));
  return default_inv_freq(base, dim);
}

// get_mscale in _compute_yarn_parameters.
double yarn_mscale(double scale, double mscale) { return scale <= 1 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0; }

// _compute_yarn_parameters.
std::pair<at::Tensor, double> yarn(const RopeSpec& r) {
  const double base = r.dims.theta;
  const auto dim = r.dim();
  double factor = factor_of(r);
  double original = static_cast<double>(r.max_positions);
  if (const auto o = r.dims.param("original_max_position_embeddings")) {
    original = *o;
    factor = static_cast<double>(r.max_positions) / original;
  }
  double attention = 0;
  if (const auto a = r.dims.param("attention_factor")) {
    attention = *a;
  } else {
    const auto mscale = r.dims.param("mscale"), mscale_all_dim = r.dims.param("mscale_all_dim");
    attention = mscale && mscale_all_dim && *mscale != 0 && *mscale_all_dim != 0
                    ? yarn_mscale(factor, *mscale) / yarn_mscale(factor, *mscale_all_dim)
                    : yarn_mscale(factor, 1);
  }
  // `get("beta_fast") or 32`: an absent or zero value takes the default.
  const double beta_fast = r.dims.param("beta_fast").value_or(0) != 0 ? *r.dims.param("beta_fast") : 32;
  const double beta_slow = r.dims.param("beta_slow").value_or(0) != 0 ? *r.dims.param("beta_slow") : 1;
  const bool truncate = r.dims.param("truncate").value_or(1) != 0;
  const auto correction_dim = [&](double rotations) {
    return (static_cast<double>(dim) * std::log(original / (rotations * 2 * M_PI))) / (2 * std::log(base));
  };
  double low = correction_dim(beta_fast), high = correction_dim(beta_slow);
  if (truncate) low = std::floor(low), high = std::ceil(high);
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(dim - 1));
  if (low == high) high += 0.001;  // linear_ramp_factor: "Prevent singularity"
  const auto pos_freqs = at::pow(base, at::arange(0, dim, 2, kF32) / static_cast<double>(dim));
  const auto extrapolation = at::reciprocal(pos_freqs);
  const auto interpolation = at::reciprocal(pos_freqs * factor);
  const auto ramp = at::clamp((at::arange(dim / 2, kF32) - low) / (high - low), 0, 1);
  const auto extrapolation_factor = 1 - ramp;
  return {interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor, attention};
}

// _compute_longrope_parameters with dynamic_rope_update's rule: the long factors once the
// sequence is longer than original_max_position_embeddings.
std::pair<at::Tensor, double> longrope(const RopeSpec& r, std::int64_t seq_len) {
  const auto dim = r.dim();
  double factor = r.dims.factor;
  double original = static_cast<double>(r.max_positions);
  if (r.original_max_positions > 0) {
    original = static_cast<double>(r.original_max_positions);
    factor = static_cast<double>(r.max_positions) / original;
  }
  double attention = 0;
  if (const auto a = r.dims.param("attention_factor")) attention = *a;
  else attention = factor <= 1.0 ? 1.0 : std::sqrt(1 + std::log(factor) / std::log(original));
  const auto& list = static_cast<double>(seq_len) > original ? r.dims.long_factor : r.dims.short_factor;
  const auto ext = at::tensor(std::vector<float>(list.begin(), list.end()), kF32);
  const auto shape = freq_exponents(dim);
  return {at::reciprocal(ext * at::pow(r.dims.theta, shape)), attention};
}

// _compute_llama3_parameters.
at::Tensor llama3(const RopeSpec& r) {
  const auto inv_freq = default_inv_freq(r.dims.theta, r.dim());
  const double factor = factor_of(r);
  const double low_freq_factor = required(r, "low_freq_factor");
  const double high_freq_factor = required(r, "high_freq_factor");
  const double old_context_len = required(r, "original_max_position_embeddings");
  const double low_freq_wavelen = old_context_len / low_freq_factor;
  const double high_freq_wavelen = old_context_len / high_freq_factor;
  const auto wavelen = at::reciprocal(inv_freq) * (2 * M_PI);
  auto scaled = at::where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq);
  const auto smooth = (at::reciprocal(wavelen) * old_context_len - low_freq_factor) / (high_freq_factor - low_freq_factor);
  const auto smoothed = (1 - smooth) * scaled / factor + smooth * scaled;
  const auto medium = at::logical_not(wavelen < high_freq_wavelen) * at::logical_not(wavelen > low_freq_wavelen);
  return at::where(medium, smoothed, scaled);
}

}  // namespace

void check_rope(const RopeSpec& r) {
  if (r.dims.theta <= 0) bad(r, fmt::format("rope_theta must be positive, got {}", r.dims.theta));
  if (r.dim() < 2 || r.dim() % 2 != 0) bad(r, fmt::format("rotary dims must be even and ≥ 2, got {}", r.dim()));
  if (!r.dims.scaled) return;
  const std::string& type = r.dims.scaling_type;
  if (type == "longrope" || type == "su") {
    const auto half = static_cast<std::size_t>(r.dim() / 2);
    if (r.dims.short_factor.size() != half || r.dims.long_factor.size() != half)
      bad(r, fmt::format("short_factor and long_factor must hold {} numbers each (rotary dims / 2), got {} and {}",
                         half, r.dims.short_factor.size(), r.dims.long_factor.size()));
  }
  if ((type == "dynamic" || type == "yarn" || type == "longrope" || type == "su") && r.max_positions <= 0)
    bad(r, "max_position_embeddings is required");
  rope_inv_freq(r, 1);  // the remaining checks, with the parameters' own errors
}

std::pair<at::Tensor, double> rope_inv_freq(const RopeSpec& r, std::int64_t seq_len) {
  if (!r.dims.scaled) return {default_inv_freq(r.dims.theta, r.dim()), 1.0};
  const std::string& type = r.dims.scaling_type;
  // A legacy rope_scaling without a type scaled linearly (transformers 4.x).
  if (type.empty() || type == "linear") {
    factor_of(r);
    return {default_inv_freq(r.dims.theta, r.dim()), 1.0};
  }
  if (type == "dynamic") return {dynamic_inv_freq(r, seq_len), 1.0};
  if (type == "yarn") return yarn(r);
  if (type == "longrope" || type == "su") return longrope(r, seq_len);  // "su": Phi-3's earlier name
  if (type == "llama3") return {llama3(r), 1.0};
  throw Failure{FailureKind::kUnsupported,
                fmt::format("{}: rope_scaling type '{}' is not implemented (linear, dynamic, yarn, longrope and "
                            "llama3 are)", r.where, type)};
}

RopeTables rope_tables(const RopeSpec& r, std::int64_t past, std::int64_t T, const at::Device& device) {
  const auto [inv_freq_cpu, attention] = rope_inv_freq(r, past + T);
  const auto inv_freq = inv_freq_cpu.to(device);
  auto pos = at::arange(past, past + T, at::TensorOptions().dtype(at::kLong).device(device)).to(at::kFloat);
  const std::string& type = r.dims.scaling_type;
  if (r.dims.scaled && (type.empty() || type == "linear")) pos = pos / r.dims.factor;
  const auto freqs = at::matmul(inv_freq.view({-1, 1}), pos.view({1, -1})).transpose(0, 1);  // [T, dim/2]
  const auto emb = at::cat({freqs, freqs}, -1);
  RopeTables t{emb.cos(), emb.sin()};
  if (attention != 1.0) {
    t.cos = t.cos * attention;
    t.sin = t.sin * attention;
  }
  return t;
}

namespace {
at::Tensor rotate_half(const at::Tensor& x) {
  const auto half = x.size(-1) / 2;
  return at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}
}  // namespace

at::Tensor apply_rope(const at::Tensor& x, const RopeTables& t) {
  const auto cos = t.cos.to(x.scalar_type()).unsqueeze(0).unsqueeze(0);
  const auto sin = t.sin.to(x.scalar_type()).unsqueeze(0).unsqueeze(0);
  const auto dim = cos.size(-1);
  if (dim == x.size(-1)) return x * cos + rotate_half(x) * sin;
  const auto rot = x.narrow(-1, 0, dim);
  return at::cat({rot * cos + rotate_half(rot) * sin, x.narrow(-1, dim, x.size(-1) - dim)}, -1);
}

}  // namespace memfit::torchrt
