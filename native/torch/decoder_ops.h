// native/torch/decoder_ops.h — the decoder's building blocks (decoder.h): RMSNorm in either
// style, linear with its bias when the checkpoint has one, the activations, the dense, fused and
// routed MLPs.
#pragma once

#include <string>
#include <unordered_set>

#include "decoder.h"

namespace memfit::torchrt {

struct DecoderOps {
  NormStyle norm = NormStyle::kLlama;
  Activation act = Activation::kSilu;
  double eps = 1e-6;
  const std::unordered_set<std::string>* present = nullptr;  // tensors the model has

  // RMSNorm over the last dim, computed in float32 (LlamaRMSNorm / GemmaRMSNorm).
  at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& w) const;
  // nn.Linear `name` (name + ".weight", and name + ".bias" when the model has it).
  at::Tensor linear(const at::Tensor& x, const StageWeights& w, const std::string& name) const;
  at::Tensor activate(const at::Tensor& x) const;
  // down(act(gate(x)) * up(x)), the projections under `prefix`.
  at::Tensor gated_mlp(const at::Tensor& x, const StageWeights& w, const std::string& prefix,
                       const std::string& gate, const std::string& up, const std::string& down) const;
  // Phi3MLP: gate, up = gate_up_proj(x).chunk(2); down_proj(up * act(gate)).
  at::Tensor fused_gated_mlp(const at::Tensor& x, const StageWeights& w, const std::string& prefix) const;
  // The sparse MoE block under `prefix` (router `gate`, experts.N).
  at::Tensor moe(const at::Tensor& x, const StageWeights& w, const std::string& prefix, const MoeSpec& m) const;
};

}  // namespace memfit::torchrt
