// RoPE scaling (rope.h): each rope_type's inv_freq and attention factor against the formulas of
// transformers 5.0's modeling_rope_utils.py, evaluated here in double precision from their text
// (quoted above each case), and llama3 / yarn on the golden tiny-llama's weights.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>

#include "failure.h"
#include "rope.h"
#include "support/reference.h"
#include "tiny_decoder.h"

namespace memfit::test {
namespace {

constexpr std::int64_t kDim = 8;
constexpr double kTheta = 10000.0;

torchrt::RopeSpec spec(const std::string& type, double factor, std::vector<std::pair<std::string, double>> params,
                       std::int64_t max_positions = 64) {
  torchrt::RopeSpec r;
  r.dims.theta = kTheta;
  r.dims.scaled = !type.empty();
  r.dims.scaling_type = type;
  r.dims.factor = factor;
  r.dims.params = std::move(params);
  if (r.dims.scaled) r.dims.params.emplace_back("factor", factor);
  r.head_dim = kDim;
  r.max_positions = max_positions;
  r.where = "config.json";
  return r;
}

// _compute_default_rope_parameters: 1.0 / (base ** (torch.arange(0, dim, 2) / dim))
std::vector<double> default_inv_freq(double base) {
  std::vector<double> out;
  for (std::int64_t i = 0; i < kDim; i += 2) out.push_back(1.0 / std::pow(base, static_cast<double>(i) / kDim));
  return out;
}

void check_inv_freq(const at::Tensor& got, const std::vector<double>& expected) {
  REQUIRE(got.numel() == static_cast<std::int64_t>(expected.size()));
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(got[static_cast<std::int64_t>(i)].item<double>() == doctest::Approx(expected[i]).epsilon(2e-6));
  }
}

}  // namespace

TEST_CASE("rope: default and linear inv_freq; linear divides the positions") {
  auto [plain, a0] = torchrt::rope_inv_freq(spec("", 1, {}), 10);
  check_inv_freq(plain, default_inv_freq(kTheta));
  CHECK(a0 == 1.0);
  const auto linear = spec("linear", 4, {});
  check_inv_freq(torchrt::rope_inv_freq(linear, 10).first, default_inv_freq(kTheta));
  // inv_freq ⊗ (position / factor): position 8 at factor 4 is plain RoPE's position 2.
  const auto t = torchrt::rope_tables(linear, 8, 1, at::kCPU);
  const auto p = torchrt::rope_tables(spec("", 1, {}), 2, 1, at::kCPU);
  CHECK(max_diff(t.cos, p.cos) < 1e-6);
  CHECK(max_diff(t.sin, p.sin) < 1e-6);
}

TEST_CASE("rope: dynamic NTK grows the base with the sequence past max_position_embeddings") {
  const auto r = spec("dynamic", 2, {});
  // seq_len = max(seq_len, max_position_embeddings): at or below it, the default frequencies.
  check_inv_freq(torchrt::rope_inv_freq(r, 64).first, default_inv_freq(kTheta));
  // base = base * ((factor * seq_len / max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2))
  const double base = kTheta * std::pow((2.0 * 100 / 64) - (2.0 - 1), static_cast<double>(kDim) / (kDim - 2));
  auto [inv, attention] = torchrt::rope_inv_freq(r, 100);
  check_inv_freq(inv, default_inv_freq(base));
  CHECK(attention == 1.0);
}

TEST_CASE("rope: llama3 keeps high frequencies, divides low ones by factor, smooths between") {
  const auto r = spec("llama3", 8, {{"low_freq_factor", 1}, {"high_freq_factor", 4},
                                    {"original_max_position_embeddings", 1024}});
  // low_freq_wavelen = old_context_len / low_freq_factor; high_freq_wavelen = old / high
  // wavelen > low: inv_freq / factor; wavelen < high: inv_freq; else
  // smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
  // (1 - smooth) * inv_freq / factor + smooth * inv_freq
  std::vector<double> expected;
  for (double f : default_inv_freq(kTheta)) {
    const double wavelen = 2 * M_PI / f;
    if (wavelen < 1024.0 / 4) expected.push_back(f);
    else if (wavelen > 1024.0 / 1) expected.push_back(f / 8);
    else {
      const double smooth = (1024.0 / wavelen - 1) / (4 - 1);
      expected.push_back((1 - smooth) * f / 8 + smooth * f);
    }
  }
  // dim 8, theta 1e4: wavelengths 6.3, 63, 628, 6283 — one of each kind plus a second high one.
  CHECK(2 * M_PI / default_inv_freq(kTheta)[2] > 256);
  CHECK(2 * M_PI / default_inv_freq(kTheta)[2] < 1024);
  auto [inv, attention] = torchrt::rope_inv_freq(r, 10);
  check_inv_freq(inv, expected);
  CHECK(attention == 1.0);
}

namespace {
// _compute_yarn_parameters, from its text:
//   find_correction_dim = (dim * log(max_pos / (num_rotations * 2 * pi))) / (2 * log(base))
//   low, high = floor/ceil (when truncate) of the beta_fast / beta_slow dims, clamped to [0, dim-1]
//   ramp = clamp((arange(dim // 2) - low) / (high - low), 0, 1); extrapolation_factor = 1 - ramp
//   inv_freq = 1/(factor*pos_freqs) * (1 - extrapolation_factor) + 1/pos_freqs * extrapolation_factor
std::vector<double> yarn_inv_freq(double factor, double original, double beta_fast, double beta_slow, bool truncate) {
  const auto correction = [&](double rot) { return (kDim * std::log(original / (rot * 2 * M_PI))) / (2 * std::log(kTheta)); };
  double low = correction(beta_fast), high = correction(beta_slow);
  if (truncate) low = std::floor(low), high = std::ceil(high);
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(kDim - 1));
  if (low == high) high += 0.001;
  std::vector<double> out;
  for (std::int64_t i = 0; i < kDim / 2; ++i) {
    const double pos_freq = std::pow(kTheta, 2.0 * static_cast<double>(i) / kDim);
    const double ramp = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
    const double extra = 1 - ramp;
    out.push_back(1 / (factor * pos_freq) * (1 - extra) + 1 / pos_freq * extra);
  }
  return out;
}
}  // namespace

TEST_CASE("rope: yarn's ramp between interpolation and extrapolation, its attention factor (mscale), truncate") {
  {
    auto [inv, attention] = torchrt::rope_inv_freq(spec("yarn", 4, {}), 10);
    check_inv_freq(inv, yarn_inv_freq(4, 64, 32, 1, true));
    CHECK(attention == doctest::Approx(0.1 * std::log(4.0) + 1.0));  // get_mscale(factor)
  }
  {
    auto [inv, attention] =
        torchrt::rope_inv_freq(spec("yarn", 4, {{"beta_fast", 8}, {"beta_slow", 2}, {"truncate", 0}}), 10);
    check_inv_freq(inv, yarn_inv_freq(4, 64, 8, 2, false));
  }
  {
    // original_max_position_embeddings given: factor = max_position_embeddings / original.
    auto [inv, attention] = torchrt::rope_inv_freq(
        spec("yarn", 3, {{"original_max_position_embeddings", 16}, {"mscale", 0.707}, {"mscale_all_dim", 1.0}}), 10);
    check_inv_freq(inv, yarn_inv_freq(4, 16, 32, 1, true));
    const double ms = 0.1 * 0.707 * std::log(4.0) + 1, all = 0.1 * 1.0 * std::log(4.0) + 1;
    CHECK(attention == doctest::Approx(ms / all));
  }
  {
    auto [inv, attention] = torchrt::rope_inv_freq(spec("yarn", 4, {{"attention_factor", 0.5}}), 10);
    CHECK(attention == 0.5);
  }
}

TEST_CASE("rope: longrope's short / long factors and attention factor") {
  auto r = spec("longrope", 1, {});
  r.dims.params.clear();  // LongRoPE needs no factor
  r.dims.short_factor = {1.0, 1.5, 2.0, 4.0};
  r.dims.long_factor = {2.0, 3.0, 5.0, 8.0};
  r.max_positions = 128;
  r.original_max_positions = 32;
  // factor = max_position_embeddings / original_max_position_embeddings (Phi-3's top-level key);
  // attention_factor = sqrt(1 + log(factor) / log(original_max_position_embeddings))
  const double attention = std::sqrt(1 + std::log(128.0 / 32) / std::log(32.0));
  // inv_freq = 1.0 / (ext_factors * base ** (arange(0, dim, 2) / dim)); long once seq_len > original
  for (auto [seq, list] : {std::pair{32, r.dims.short_factor}, std::pair{33, r.dims.long_factor}}) {
    CAPTURE(seq);
    std::vector<double> expected;
    const auto plain = default_inv_freq(kTheta);
    for (std::size_t i = 0; i < plain.size(); ++i) expected.push_back(plain[i] / list[i]);
    auto [inv, a] = torchrt::rope_inv_freq(r, seq);
    check_inv_freq(inv, expected);
    CHECK(a == doctest::Approx(attention));
  }
  // cos/sin carry the attention factor.
  const auto t = torchrt::rope_tables(r, 0, 1, at::kCPU);
  CHECK(t.cos[0][0].item<double>() == doctest::Approx(attention));
}

TEST_CASE("rope: bad or unknown scaling is named") {
  const auto message_of = [](const torchrt::RopeSpec& r) {
    try {
      torchrt::check_rope(r);
    } catch (const Failure& f) {
      return f.message;
    }
    return std::string("no error");
  };
  CHECK(message_of(spec("llama3", 8, {})).find("'low_freq_factor' is required") != std::string::npos);
  CHECK(message_of(spec("mystery", 2, {})).find("rope_scaling type 'mystery' is not implemented") != std::string::npos);
  auto lr = spec("longrope", 1, {});
  lr.dims.short_factor = {1.0};
  CHECK(message_of(lr).find("short_factor and long_factor must hold 4 numbers each") != std::string::npos);
}

TEST_CASE("rope: llama3 and yarn run on the golden tiny-llama's weights") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("llama3 / yarn on tiny-llama");
  TempDir tmp;
  const std::string weights = *dir + "/tiny-llama";
  const auto ids = golden_input(golden_json("tiny-llama"), "C");
  const auto plain = run(load(weights), ids);
  auto config = nlohmann::json::parse(read_text(weights + "/config.json"));
  const auto scaled = [&](const nlohmann::json& rope_scaling) {
    config["rope_scaling"] = rope_scaling;
    const std::string path = tmp.path + "/config.json";
    std::ofstream(path) << config.dump();
    return run(load(weights, "", path), ids);
  };
  const auto llama3 = scaled({{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0},
                              {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 16}});
  // Position 0 is not rotated (cos 1, sin 0) whatever the frequencies: the same logits there.
  CHECK(bitwise_equal(llama3.select(1, 0), plain.select(1, 0)));
  CHECK(max_diff(llama3, plain) > 1e-3);
  const auto yarn = scaled({{"rope_type", "yarn"}, {"factor", 4.0}});
  CHECK(bool(at::isfinite(yarn).all().item<bool>()));
  // Position 0 attends to itself alone, whatever scales its scores.
  CHECK(bitwise_equal(yarn.select(1, 0), plain.select(1, 0)));
  CHECK(max_diff(yarn, plain) > 1e-3);
  // yarn's attention factor (0.1·ln 4 + 1) multiplies cos/sin, so the scores: 1.0 instead differs.
  const auto yarn_unit = scaled({{"rope_type", "yarn"}, {"factor", 4.0}, {"attention_factor", 1.0}});
  CHECK(max_diff(yarn_unit, yarn) > 1e-3);
}

}  // namespace memfit::test
