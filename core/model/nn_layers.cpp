#include "memfit/model/nn_layers.h"

namespace memfit::nn {

void linear(TreeBuilder& b, std::string_view name, std::int64_t in, std::int64_t out, bool bias,
            std::string_view cls) {
  auto s = b.module(name, cls);
  b.param("weight", {out, in});
  if (bias) b.param("bias", {out});
}

void embedding(TreeBuilder& b, std::string_view name, std::int64_t num, std::int64_t dim,
               std::string_view cls) {
  auto s = b.module(name, cls);
  b.param("weight", {num, dim});
}

void tied_linear(TreeBuilder& b, std::string_view name, const std::string& target_weight,
                 std::string_view cls) {
  auto s = b.module(name, cls);
  b.tied_param("weight", target_weight);
}

void layer_norm(TreeBuilder& b, std::string_view name, std::int64_t dim, bool bias,
                std::string_view cls) {
  auto s = b.module(name, cls);
  b.param("weight", {dim});
  if (bias) b.param("bias", {dim});
}

void rms_norm(TreeBuilder& b, std::string_view name, std::int64_t dim, std::string_view cls) {
  auto s = b.module(name, cls);
  b.param("weight", {dim});
}

void conv1d_gpt(TreeBuilder& b, std::string_view name, std::int64_t nx, std::int64_t nf) {
  auto s = b.module(name, "Conv1D");
  b.param("weight", {nx, nf});
  b.param("bias", {nf});
}

void conv1d(TreeBuilder& b, std::string_view name, std::int64_t in, std::int64_t out,
            std::int64_t kernel, bool bias, std::int64_t groups) {
  auto s = b.module(name, "Conv1d");
  b.param("weight", {out, in / groups, kernel});
  if (bias) b.param("bias", {out});
}

void conv2d(TreeBuilder& b, std::string_view name, std::int64_t in, std::int64_t out,
            std::int64_t kh, std::int64_t kw, bool bias, std::int64_t groups,
            std::string_view cls) {
  auto s = b.module(name, cls);
  b.param("weight", {out, in / groups, kh, kw});
  if (bias) b.param("bias", {out});
}

void batch_norm2d(TreeBuilder& b, std::string_view name, std::int64_t channels,
                  std::string_view cls) {
  auto s = b.module(name, cls);
  b.param("weight", {channels});
  b.param("bias", {channels});
  b.buffer("running_mean", {channels}, DType::kF32, true);
  b.buffer("running_var", {channels}, DType::kF32, true);
  b.buffer("num_batches_tracked", {}, DType::kI64, true);
}

}  // namespace memfit::nn

namespace memfit::nn {

void dropout(TreeBuilder& b, std::string_view name, BufferEra era) { b.stateless(name, "Dropout", era); }

std::string_view activation_class(std::string_view act) {
  // transformers' activations.py ACT2CLS (the same table in 4.40 and today).
  static constexpr std::pair<std::string_view, std::string_view> kTable[] = {
      {"gelu", "GELUActivation"},          {"gelu_10", "ClippedGELUActivation"},
      {"gelu_fast", "FastGELUActivation"}, {"gelu_new", "NewGELUActivation"},
      {"gelu_python", "GELUActivation"},   {"gelu_pytorch_tanh", "PytorchGELUTanh"},
      {"gelu_accurate", "AccurateGELUActivation"}, {"laplace", "LaplaceActivation"},
      {"leaky_relu", "LeakyReLU"},         {"linear", "LinearActivation"},
      {"mish", "MishActivation"},          {"quick_gelu", "QuickGELUActivation"},
      {"relu", "ReLU"},                    {"relu2", "ReLUSquaredActivation"},
      {"relu6", "ReLU6"},                  {"sigmoid", "Sigmoid"},
      {"silu", "SiLU"},                    {"swish", "SiLU"},
      {"tanh", "Tanh"},
  };
  for (const auto& [k, v] : kTable)
    if (k == act) return v;
  return act;
}

void activation(TreeBuilder& b, std::string_view name, std::string_view act, BufferEra era) {
  b.stateless(name, activation_class(act), era);
}

}  // namespace memfit::nn
