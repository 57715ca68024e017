// Llama (transformers 4.40 LlamaForCausalLM, eager attention) in ATen ops, matching the golden
// README: RMSNorm in float32, rotate_half RoPE with float32 inv_freq (linear rope_scaling divides
// the positions), GQA (query head j uses KV head j / (heads / kv_heads)), SwiGLU MLP, separate
// lm_head, logits cast to float32.
#include <cmath>
#include <tuple>

#include <fmt/format.h>

#include "failure.h"
#include "load_plan.h"
#include "model_program.h"

namespace memfit::torchrt {
namespace {

struct LlamaTable {
  std::int64_t hidden, heads, kv_heads, head_dim, layers;
  double eps, rope_theta;
  double rope_factor = 1.0;  // rope_scaling {"type": "linear", "factor": f}
  std::string lm_head;
};

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& w, double eps) {
  const auto input_dtype = x.scalar_type();
  auto h = x.to(at::kFloat);
  const auto variance = h.pow(2).mean(-1, /*keepdim=*/true);
  h = h * at::rsqrt(variance + eps);
  return w * h.to(input_dtype);
}

at::Tensor rotate_half(const at::Tensor& x) {
  const auto half = x.size(-1) / 2;
  return at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

// [B, kv, S, d] → [B, kv * rep, S, d] (transformers' repeat_kv).
at::Tensor repeat_kv(const at::Tensor& x, std::int64_t rep) {
  if (rep == 1) return x;
  const auto b = x.size(0), kv = x.size(1), s = x.size(2), d = x.size(3);
  return x.unsqueeze(2).expand({b, kv, rep, s, d}).reshape({b, kv * rep, s, d});
}

class LlamaProgram final : public ModelProgram {
 public:
  LlamaProgram(LlamaTable t, const TensorTree& tree) : t_(std::move(t)) {
    stages_.push_back({"embed", {"model.embed_tokens.weight"}, {"model.embed_tokens.weight"}});
    for (std::int64_t i = 0; i < t_.layers; ++i) {
      const std::string block = "model.layers." + std::to_string(i);
      stages_.push_back({block, tensors_under(tree, block)});
    }
    stages_.push_back({"head", {"model.norm.weight", t_.lm_head}});
  }

  std::int64_t layers() const override { return t_.layers; }

  void run(std::size_t stage, const StageWeights& w, ForwardState& s) const override {
    if (stage == 0) {
      s.hidden = w.embedding("model.embed_tokens.weight", s.input_ids);
      rope_tables(s);
      return;
    }
    if (stage == stages_.size() - 1) {
      const auto h = rms_norm(s.hidden, w["model.norm.weight"], t_.eps);
      s.logits = w.linear(h, t_.lm_head).to(at::kFloat);
      return;
    }
    block(static_cast<std::int64_t>(stage) - 1, stages_[stage].name + ".", w, s);
  }

 private:
  // LlamaRotaryEmbedding.forward: float32 inv_freq ⊗ float32 positions, cat(freqs, freqs), cos/sin.
  void rope_tables(const ForwardState& s) const {
    const auto dev = s.input_ids.device();
    const auto f32 = at::TensorOptions().dtype(at::kFloat).device(dev);
    const auto exps = at::arange(0, t_.head_dim, 2, at::TensorOptions().dtype(at::kLong).device(dev))
                          .to(at::kFloat) / static_cast<double>(t_.head_dim);
    const auto inv_freq = at::reciprocal(at::pow(t_.rope_theta, exps));
    auto pos = at::arange(s.past, s.past + s.input_ids.size(1), at::TensorOptions().dtype(at::kLong).device(dev))
                   .to(at::kFloat);
    if (t_.rope_factor != 1.0) pos = pos / t_.rope_factor;
    const auto freqs = at::matmul(inv_freq.view({-1, 1}), pos.view({1, -1})).transpose(0, 1);  // [T, d/2]
    const auto emb = at::cat({freqs, freqs}, -1);
    cos_ = emb.cos().to(f32.dtype());
    sin_ = emb.sin().to(f32.dtype());
  }

  void block(std::int64_t layer, const std::string& n, const StageWeights& w, ForwardState& s) const {
    at::Tensor& h = s.hidden;
    const auto B = h.size(0), T = h.size(1);
    const auto x = rms_norm(h, w[n + "input_layernorm.weight"], t_.eps);
    auto q = w.linear(x, n + "self_attn.q_proj.weight").view({B, T, t_.heads, t_.head_dim}).transpose(1, 2);
    auto k = w.linear(x, n + "self_attn.k_proj.weight").view({B, T, t_.kv_heads, t_.head_dim}).transpose(1, 2);
    auto v = w.linear(x, n + "self_attn.v_proj.weight").view({B, T, t_.kv_heads, t_.head_dim}).transpose(1, 2);
    const auto cos = cos_.to(q.scalar_type()).unsqueeze(0).unsqueeze(0);
    const auto sin = sin_.to(q.scalar_type()).unsqueeze(0).unsqueeze(0);
    q = q * cos + rotate_half(q) * sin;
    k = k * cos + rotate_half(k) * sin;
    std::tie(k, v) = s.cached_kv(layer, k, v);
    const auto rep = t_.heads / t_.kv_heads;
    k = repeat_kv(k, rep);
    v = repeat_kv(v, rep);
    const auto S = k.size(2);
    auto scores = at::matmul(q, k.transpose(2, 3)) / std::sqrt(static_cast<double>(t_.head_dim));
    const auto causal = at::ones({T, S}, at::TensorOptions().dtype(at::kBool).device(q.device())).tril(S - T);
    scores = at::where(causal, scores, at::full({}, finfo_min(scores.scalar_type()), scores.options()));
    const auto probs = at::softmax(scores, -1, at::kFloat).to(q.scalar_type());
    const auto attn = at::matmul(probs, v).transpose(1, 2).contiguous().reshape({B, T, t_.hidden});
    h = h + w.linear(attn, n + "self_attn.o_proj.weight");
    const auto x2 = rms_norm(h, w[n + "post_attention_layernorm.weight"], t_.eps);
    const auto gate = at::silu(w.linear(x2, n + "mlp.gate_proj.weight"));
    h = h + w.linear(gate * w.linear(x2, n + "mlp.up_proj.weight"), n + "mlp.down_proj.weight");
  }

  LlamaTable t_;
  // RoPE tables of the current forward (set by the embedding stage, read by every block).
  mutable at::Tensor cos_, sin_;
};

}  // namespace

std::unique_ptr<ModelProgram> make_llama(const Model& model, const TensorTree& tree) {
  const ModelDims& d = program_dims(model);
  const std::string& where = model.config.where();
  LlamaTable t;
  t.hidden = d.hidden;
  t.heads = d.heads;
  t.kv_heads = d.kv_heads;
  t.head_dim = d.head_dim;
  t.layers = d.layers;
  t.eps = d.norm_eps;
  RopeDims rope;
  rope.theta = 10000.0;  // LlamaConfig's rope_theta, for a model without layers
  if (!d.per_layer.empty()) rope = d.per_layer.front().rope;
  t.rope_theta = rope.theta;
  if (t.heads % t.kv_heads != 0)
    throw Failure{FailureKind::kInvalidInput,
                        fmt::format("{}: num_attention_heads {} is not a multiple of num_key_value_heads {}",
                                    where, t.heads, t.kv_heads)};
  if (rope.scaled) {
    const std::string type = rope.scaling_type.empty() ? "linear" : rope.scaling_type;
    if (type != "linear")
      throw Failure{FailureKind::kUnsupported,
                    fmt::format("{}: rope_scaling type '{}' is not implemented (linear is)", where, type)};
    t.rope_factor = rope.factor;
  }
  t.lm_head = tree.find_tensor("lm_head.weight") >= 0 ? resolve_alias(tree, "lm_head.weight")
                                                       : "model.embed_tokens.weight";
  return std::make_unique<LlamaProgram>(std::move(t), tree);
}

}  // namespace memfit::torchrt
