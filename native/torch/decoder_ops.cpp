// The decoder's building blocks (transformers 5.0: LlamaRMSNorm and LlamaMLP in modeling_llama.py,
// GemmaRMSNorm in modeling_gemma.py, Phi3MLP in modeling_phi3.py, MixtralTopKRouter /
// MixtralExperts in modeling_mixtral.py, Qwen3MoeSparseMoeBlock in modeling_qwen3_moe.py).
#include "decoder_ops.h"

#include <fmt/format.h>

#include "failure.h"

namespace memfit::torchrt {

Activation activation(const std::string& name, const std::string& where) {
  if (name == "silu" || name == "swish") return Activation::kSilu;
  // ACT2FN: gelu_pytorch_tanh is torch's tanh approximation; gelu_new is the same formula.
  if (name == "gelu_pytorch_tanh" || name == "gelu_new" || name == "gelu_fast") return Activation::kGeluTanh;
  if (name == "gelu") return Activation::kGelu;
  throw Failure{FailureKind::kUnsupported,
                fmt::format("{}: activation '{}' is not implemented (silu, gelu, gelu_pytorch_tanh are)", where, name)};
}

at::Tensor DecoderOps::rms_norm(const at::Tensor& x, const at::Tensor& w) const {
  const auto input_dtype = x.scalar_type();
  auto h = x.to(at::kFloat);
  h = h * at::rsqrt(h.pow(2).mean(-1, /*keepdim=*/true) + eps);
  // Llama casts before the weight (x.to(float16) * w); Gemma after ((x * (1 + w)).to(float16)).
  if (norm == NormStyle::kGemma) return (h * (1.0 + w.to(at::kFloat))).to(input_dtype);
  return w * h.to(input_dtype);
}

at::Tensor DecoderOps::linear(const at::Tensor& x, const StageWeights& w, const std::string& name) const {
  const std::string bias = name + ".bias";
  // Through StageWeights::linear: a decoding step reads half weights as stored (half_linear.h).
  if (present && present->count(bias)) return w.linear(x, name + ".weight", bias);
  return w.linear(x, name + ".weight");
}

at::Tensor DecoderOps::activate(const at::Tensor& x) const {
  switch (act) {
    case Activation::kSilu: return at::silu(x);
    case Activation::kGeluTanh: return at::gelu(x, "tanh");
    case Activation::kGelu: return at::gelu(x);
  }
  return x;
}

at::Tensor DecoderOps::gated_mlp(const at::Tensor& x, const StageWeights& w, const std::string& prefix,
                                 const std::string& gate, const std::string& up, const std::string& down) const {
  const auto g = activate(linear(x, w, prefix + gate));
  return linear(g * linear(x, w, prefix + up), w, prefix + down);
}

at::Tensor DecoderOps::fused_gated_mlp(const at::Tensor& x, const StageWeights& w, const std::string& prefix) const {
  const auto gate_up = linear(x, w, prefix + "gate_up_proj").chunk(2, -1);
  return linear(gate_up[1] * activate(gate_up[0]), w, prefix + "down_proj");
}

// Router: softmax over every expert in float32, top-k, renormalised (Mixtral; Qwen3-MoE with
// norm_topk_prob). Experts: each expert hit runs on its tokens, scaled by the float32 weight,
// index_add_ into zeros in the hidden dtype.
at::Tensor DecoderOps::moe(const at::Tensor& x, const StageWeights& w, const std::string& prefix,
                           const MoeSpec& m) const {
  const auto sizes = x.sizes().vec();
  const auto flat = x.reshape({-1, x.size(-1)});
  const auto logits = w.linear(flat, prefix + "gate.weight");
  const auto probs = at::softmax(logits.to(at::kFloat), -1);
  auto [top_weights, top_index] = at::topk(probs, m.top_k, -1);
  if (m.renormalize) top_weights = top_weights / top_weights.sum(-1, /*keepdim=*/true);
  auto out = at::zeros_like(flat);
  const auto expert_mask = at::one_hot(top_index, m.experts).permute({2, 1, 0});  // [E, k, N]
  const auto hit = at::greater(expert_mask.sum({-1, -2}), 0).nonzero().to(at::kCPU);
  const auto* experts = hit.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < hit.size(0); ++i) {
    const std::int64_t e = experts[i];
    const auto where = at::where(expert_mask[e]);  // top-k slot, token
    const auto& slot = where[0];
    const auto& token = where[1];
    const std::string expert = prefix + "experts." + std::to_string(e) + ".";
    auto y = gated_mlp(flat.index_select(0, token), w, expert, m.gate, m.up, m.down);
    y = y * top_weights.view(-1).index_select(0, token * m.top_k + slot).unsqueeze(-1);
    out.index_add_(0, token, y.to(out.scalar_type()));
  }
  return out.view(sizes);
}

}  // namespace memfit::torchrt
