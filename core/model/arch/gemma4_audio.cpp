#include "gemma4_audio.h"

#include <fmt/format.h>

namespace memfit::arch::gemma4 {

void norm(TreeBuilder& b, std::string_view name, std::int64_t dim) {
  nn::rms_norm(b, name, dim, "Gemma4RMSNorm");
}

void clippable(TreeBuilder& b, std::string_view name, std::int64_t in, std::int64_t out, bool clipped) {
  auto m = b.module(name, "Gemma4ClippableLinear");
  nn::linear(b, "linear", in, out, false);
  if (clipped)
    for (const char* k : {"input_min", "input_max", "output_min", "output_max"})
      b.buffer(k, {}, DType::kF32, true);
}

std::int64_t audio_output_dims(const Config& c) {
  return c.dim_or({"output_proj_dims"}, c.dim_or({"hidden_size"}, 1024));
}

namespace {

struct AudioDims {
  std::int64_t hidden, layers, heads, kernel, c0, c1;
  bool clipped;
  std::string act;
};

AudioDims read_audio(const Config& c) {
  AudioDims d;
  d.hidden = c.dim_or({"hidden_size"}, 1024);
  d.layers = c.repeats_or({"num_hidden_layers"}, 12);
  d.heads = c.dim_or({"num_attention_heads"}, 8);
  require_divisible(c, d.hidden, "hidden_size", d.heads, "num_attention_heads");
  d.kernel = c.dim_or({"conv_kernel_size"}, 5);
  const std::vector<std::int64_t> channels = c.int_list({"subsampling_conv_channels"}).value_or(
      std::vector<std::int64_t>{128, 32});
  if (channels.size() != 2 || channels[0] <= 0 || channels[1] <= 0)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: 'subsampling_conv_channels' must list two positive channel counts "
                            "(Gemma4AudioSubSampleConvProjection's layer0 and layer1), got {} entries",
                            c.where(), channels.size()));
  d.c0 = channels[0];
  d.c1 = channels[1];
  d.clipped = c.flag_or({"use_clipped_linears"}, true);
  d.act = c.string_or({"hidden_act"}, "silu");
  return d;
}

void subsample_layer(TreeBuilder& b, std::string_view name, std::int64_t in, std::int64_t out) {
  auto l = b.module(name, "Gemma4AudioSubSampleConvProjectionLayer");
  nn::conv2d(b, "conv", in, out, 3, 3, false);
  nn::layer_norm(b, "norm", out, false);
  b.stateless("act", "ReLU");
}

void feed_forward(TreeBuilder& b, std::string_view name, const AudioDims& d) {
  auto f = b.module(name, "Gemma4AudioFeedForward");
  clippable(b, "ffw_layer_1", d.hidden, 4 * d.hidden, d.clipped);
  clippable(b, "ffw_layer_2", 4 * d.hidden, d.hidden, d.clipped);
  norm(b, "pre_layer_norm", d.hidden);
  norm(b, "post_layer_norm", d.hidden);
  nn::activation(b, "act_fn", d.act);
}

void attention(TreeBuilder& b, const AudioDims& d) {
  auto a = b.module("self_attn", "Gemma4AudioAttention");
  const std::int64_t head_dim = d.hidden / d.heads;
  for (const char* p : {"q_proj", "k_proj", "v_proj"}) clippable(b, p, d.hidden, d.heads * head_dim, d.clipped);
  clippable(b, "post", d.hidden, d.hidden, d.clipped);
  nn::linear(b, "relative_k_proj", d.hidden, d.heads * head_dim, false);
  b.param("per_dim_scale", {head_dim});
  b.buffer("softcap", {}, DType::kF32, false);
}

void light_conv(TreeBuilder& b, const AudioDims& d) {
  auto l = b.module("lconv1d", "Gemma4AudioLightConv1d");
  clippable(b, "linear_start", d.hidden, 2 * d.hidden, d.clipped);
  clippable(b, "linear_end", d.hidden, d.hidden, d.clipped);
  {
    // Depthwise (groups = hidden), no bias.
    auto conv = b.module("depthwise_conv1d", "Gemma4AudioCausalConv1d");
    b.param("weight", {d.hidden, 1, d.kernel});
  }
  norm(b, "pre_layer_norm", d.hidden);
  norm(b, "conv_norm", d.hidden);
  nn::activation(b, "act_fn", d.act);
}

}  // namespace

TensorTree audio_tower(const Config& c) {
  const AudioDims d = read_audio(c);
  TreeBuilder b{"Gemma4AudioModel"};
  b.set_no_split({"Gemma4AudioLayer"});
  {
    auto s = b.module("subsample_conv_projection", "Gemma4AudioSubSampleConvProjection");
    subsample_layer(b, "layer0", 1, d.c0);
    subsample_layer(b, "layer1", d.c0, d.c1);
    nn::linear(b, "input_proj_linear", (d.c0 / 4) * d.c1, d.hidden, false);
  }
  {
    auto r = b.module("rel_pos_enc", "Gemma4AudioRelPositionalEncoding");
    b.buffer("inv_timescales", {1, 1, d.hidden / 2}, DType::kF32, false);
  }
  {
    auto list = b.module("layers", "ModuleList");
    for (std::int64_t i = 0; i < d.layers; ++i) {
      auto l = b.item(i, "Gemma4AudioLayer");
      feed_forward(b, "feed_forward1", d);
      feed_forward(b, "feed_forward2", d);
      attention(b, d);
      light_conv(b, d);
      for (const char* n : {"norm_pre_attn", "norm_post_attn", "norm_out"}) norm(b, n, d.hidden);
    }
  }
  nn::linear(b, "output_proj", d.hidden, audio_output_dims(c), true);
  return b.finish();
}

}  // namespace memfit::arch::gemma4
