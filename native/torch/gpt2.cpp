// GPT-2 (transformers 4.40 GPT2LMHeadModel, eager attention) in ATen ops, matching the golden
// README's "math a native implementation must match": Conv1D weights stored [in, out]
// (y = x·W + b via addmm), c_attn split q|k|v, gelu_new (tanh form), tied lm_head = wte.
#include <cmath>
#include <tuple>

#include "load_plan.h"
#include "model_program.h"

namespace memfit::torchrt {
namespace {

struct Gpt2Table {
  std::int64_t hidden, heads, layers;
  double eps;
  std::string prefix;  // "transformer." for GPT2LMHeadModel, "" for GPT2Model
  std::string lm_head; // tensor holding the output embedding (tied: wte)
};

// Conv1D: y = x·W + b with W [in, out] — torch.addmm(b, x.view(-1, in), W), as transformers.
at::Tensor conv1d(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  auto sizes = x.sizes().vec();
  sizes.back() = w.size(1);
  return at::addmm(b, x.reshape({-1, x.size(-1)}), w).view(sizes);
}

at::Tensor gelu_new(const at::Tensor& x) {
  return 0.5 * x * (1.0 + at::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * at::pow(x, 3.0))));
}

// [B, T, H] → [B, heads, T, head_dim]
at::Tensor split_heads(const at::Tensor& x, std::int64_t heads) {
  return x.view({x.size(0), x.size(1), heads, x.size(2) / heads}).permute({0, 2, 1, 3});
}

class Gpt2Program final : public ModelProgram {
 public:
  Gpt2Program(Gpt2Table t, const TensorTree& tree) : t_(std::move(t)) {
    const std::string& p = t_.prefix;
    stages_.push_back({"embed", {p + "wte.weight", p + "wpe.weight"}, {p + "wte.weight"}});
    for (std::int64_t i = 0; i < t_.layers; ++i) {
      const std::string block = p + "h." + std::to_string(i);
      stages_.push_back({block, tensors_under(tree, block)});
    }
    stages_.push_back({"head", {p + "ln_f.weight", p + "ln_f.bias", t_.lm_head}});
    if (const int wpe = tree.find_tensor(p + "wpe.weight"); wpe >= 0)
      position_limit_ = tree.tensors[static_cast<std::size_t>(wpe)].shape.at(0);
  }

  std::int64_t layers() const override { return t_.layers; }

  void run(std::size_t stage, const StageWeights& w, ForwardState& s) const override {
    const std::string& p = t_.prefix;
    if (stage == 0) {
      const auto positions = at::arange(s.past, s.past + s.input_ids.size(1),
                                        at::TensorOptions().dtype(at::kLong).device(s.input_ids.device()));
      s.hidden = w.embedding(p + "wte.weight", s.input_ids) + at::embedding(w[p + "wpe.weight"], positions);
      return;
    }
    if (stage == stages_.size() - 1) {
      const auto h = at::layer_norm(s.hidden, {t_.hidden}, w[p + "ln_f.weight"], w[p + "ln_f.bias"], t_.eps);
      s.logits = at::linear(h, w[t_.lm_head]).to(at::kFloat);
      return;
    }
    block(static_cast<std::int64_t>(stage) - 1, stages_[stage].name + ".", w, s);
  }

 private:
  void block(std::int64_t layer, const std::string& n, const StageWeights& w, ForwardState& s) const {
    at::Tensor& h = s.hidden;
    const auto x = at::layer_norm(h, {t_.hidden}, w[n + "ln_1.weight"], w[n + "ln_1.bias"], t_.eps);
    const auto qkv = conv1d(x, w[n + "attn.c_attn.weight"], w[n + "attn.c_attn.bias"]).split(t_.hidden, 2);
    const auto q = split_heads(qkv[0], t_.heads);
    auto k = split_heads(qkv[1], t_.heads);
    auto v = split_heads(qkv[2], t_.heads);
    std::tie(k, v) = s.cached_kv(layer, k, v);
    const std::int64_t T = q.size(2), S = k.size(2);
    // transformers: matmul, then ÷ torch.full([], head_dim ** 0.5), causal where(), softmax.
    auto scores = at::matmul(q, k.transpose(-1, -2)) / std::sqrt(static_cast<double>(v.size(-1)));
    const auto causal = at::ones({T, S}, at::TensorOptions().dtype(at::kBool).device(q.device())).tril(S - T);
    scores = at::where(causal, scores, masked_value(scores));
    const auto probs = at::softmax(scores, -1);
    const auto attn = at::matmul(probs, v).permute({0, 2, 1, 3}).contiguous().view({h.size(0), T, t_.hidden});
    h = h + conv1d(attn, w[n + "attn.c_proj.weight"], w[n + "attn.c_proj.bias"]);
    const auto x2 = at::layer_norm(h, {t_.hidden}, w[n + "ln_2.weight"], w[n + "ln_2.bias"], t_.eps);
    const auto m = gelu_new(conv1d(x2, w[n + "mlp.c_fc.weight"], w[n + "mlp.c_fc.bias"]));
    h = h + conv1d(m, w[n + "mlp.c_proj.weight"], w[n + "mlp.c_proj.bias"]);
  }

  Gpt2Table t_;
};

}  // namespace

std::unique_ptr<ModelProgram> make_gpt2(const Model& model, const TensorTree& tree) {
  const ModelDims& d = program_dims(model);
  Gpt2Table t;
  t.hidden = d.hidden;
  t.heads = d.heads;
  t.layers = d.layers;
  t.eps = d.norm_eps;
  t.prefix = tree.find_module("transformer") >= 0 ? "transformer." : "";
  t.lm_head = tree.find_tensor("lm_head.weight") >= 0 ? resolve_alias(tree, "lm_head.weight")
                                                       : t.prefix + "wte.weight";
  return std::make_unique<Gpt2Program>(std::move(t), tree);
}

}  // namespace memfit::torchrt
