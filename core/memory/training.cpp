#include "memfit/memory/training.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "memfit/error.h"
#include "memfit/memory/linear_layers.h"
#include "memfit/option_error.h"

namespace memfit {

double optimizer_state_bytes(Optimizer o, const Shape& shape) {
  double n = 1;
  for (auto s : shape) n *= static_cast<double>(s);
  switch (o) {
    case Optimizer::kAdamW: return 8 * n;  // exp_avg + exp_avg_sq, fp32
    case Optimizer::kAdamW8bit:
      // bitsandbytes Optimizer2State: uint8 state1/state2 + fp32 absmax1/absmax2 per 256 values;
      // tensors under min_8bit_size = 4096 values keep fp32 states.
      if (n < 4096) return 8 * n;
      return 2 * n + 2 * 4 * std::ceil(n / 256);
    case Optimizer::kAdafactor: {
      // transformers' Adafactor (beta1=None): factored exp_avg_sq_row [shape[:-1]] and
      // exp_avg_sq_col [shape[:-2] + shape[-1:]] for ≥2-D tensors, exp_avg_sq otherwise.
      if (shape.size() < 2) return 4 * n;
      const double last = static_cast<double>(shape.back());
      const double second = static_cast<double>(shape[shape.size() - 2]);
      return 4 * (n / last + n / second);
    }
    case Optimizer::kSgd: return 4 * n;  // momentum_buffer
  }
  return 8 * n;
}

double activation_bytes_per_layer(const ModelDims& d, std::int64_t s_, std::int64_t b_, double e,
                                  AttentionImpl attention) {
  const double s = static_cast<double>(s_), b = static_cast<double>(b_), sb = s * b;
  const double h = static_cast<double>(d.hidden);
  const double a = static_cast<double>(d.heads);
  const double qw = static_cast<double>(d.heads * d.head_dim);
  const double kvw = static_cast<double>(d.kv_heads * d.head_dim);
  const double I = static_cast<double>(d.intermediate);
  const double mask = d.dropout ? 1.0 : 0.0;  // dropout masks, one byte per value
  // Attention block: QKV input, Q, K, V, output-projection input, dropout mask.
  const double attn = sb * (h + qw + 2 * kvw + qw) * e + mask * sb * h;
  // Scores: softmax output (+ dropout mask and dropout output) — or, with flash/sdpa kernels,
  // only the float32 logsumexp.
  const double scores = attention == AttentionImpl::kEager ? a * s * s * b * (e + mask * (1 + e))
                                                           : a * s * b * 4;
  // MLP: its input, then 2 (fc1 output, activation output) or 4 (gate, up, act, product) wide tensors.
  const double mlp = sb * (h + (d.gated_mlp ? 4.0 : 2.0) * I) * e + mask * sb * h;
  const double norms = 2 * sb * h * e;
  return attn + scores + mlp + norms;
}

TrainingActivations training_activations(const ModelDims& d, std::int64_t s, std::int64_t b,
                                         double e, AttentionImpl attention, bool ckpt) {
  TrainingActivations out;
  const double layers = static_cast<double>(d.layers + d.encoder_layers);
  const double per_layer = activation_bytes_per_layer(d, s, b, e, attention);
  const double sbh = static_cast<double>(s) * static_cast<double>(b) * static_cast<double>(d.hidden);
  if (ckpt) {
    out.parts.push_back({"checkpointed layer inputs", layers * sbh * e});
    out.parts.push_back({"one layer recomputed", per_layer});
  } else {
    out.parts.push_back({fmt::format("{} layers × {:.0f} bytes", layers, per_layer), layers * per_layer});
  }
  // transformers' ForCausalLMLoss: logits in the model dtype, upcast to float32, and
  // cross_entropy's float32 log-softmax kept for backward.
  out.parts.push_back({"logits + float32 loss",
                       static_cast<double>(s) * static_cast<double>(b) * static_cast<double>(d.vocab) * (e + 8)});
  for (const auto& p : out.parts) out.bytes += p.bytes;
  return out;
}

TrainingEstimate estimate_training(const TensorTree& tree, const ModelDims& dims,
                                   const TrainingOptions& o,
                                   const std::optional<QuantScheme>& base_quant) {
  if (o.gpus < 1) throw option_error("gpus", " must be at least 1");
  if (o.zero_stage < 0 || o.zero_stage > 3)
    throw option_error("zero", fmt::format(" must be 0, 1, 2 or 3, got {}", o.zero_stage));
  if (o.sequence_length < 1 || o.batch < 1)
    throw Error(ErrorCode::kInvalidArgument, "training: sequence length and batch must be at least 1");
  TrainingEstimate t;
  t.method = o.method;
  const double e = dtype_bits(o.compute) / 8.0;
  const int stage = o.fsdp ? 3 : o.zero_stage;
  const double n = static_cast<double>(o.gpus);
  const double w_div = stage >= 3 ? n : 1, g_div = stage >= 2 ? n : 1, o_div = stage >= 1 ? n : 1;

  if (o.method == TrainMethod::kFull) {
    if (base_quant)
      throw OptionMessage()
          .text(fmt::format("full fine-tuning needs unquantized weights, and this model is quantized ({}); use ",
                            base_quant->describe()))
          .option("train.method")
          .text(" lora or qlora, or ")
          .option("dtype")
          .error();
    double params = 0, opt = 0;
    for (int i : tree.named_parameters()) {
      const TensorInfo& p = tree.tensors[static_cast<std::size_t>(i)];
      params += static_cast<double>(p.numel);
      opt += optimizer_state_bytes(o.optimizer, p.shape);
    }
    t.trainable_parameters = tree.parameter_count();
    t.weights_bytes = weight_bytes(tree, dims.vocab, o.compute, std::nullopt).bytes / w_div;
    t.gradient_bytes = params * e / g_div;
    t.master_weights_bytes = o.compute == DType::kF32 ? 0 : params * 4 / o_div;
    t.optimizer_bytes = opt / o_div;
  } else {
    const LoraPlan plan = lora_plan(tree, dims.vocab, o.rank, o.targets);
    std::optional<QuantScheme> quant = base_quant;
    if (o.method == TrainMethod::kQlora && !quant) quant = qlora_scheme();
    double opt = 0;
    for (const auto& a : plan.adapters)
      opt += optimizer_state_bytes(o.optimizer, {a.a_rows, a.a_cols}) +
             optimizer_state_bytes(o.optimizer, {a.b_rows, a.b_cols});
    const double trainable = static_cast<double>(plan.trainable_parameters);
    t.trainable_parameters = plan.trainable_parameters;
    t.lora_modules = plan.adapters.size();
    // PEFT creates the adapters in float32 (autocast_adapter_dtype=True) next to the frozen base.
    t.weights_bytes = (weight_bytes(tree, dims.vocab, o.compute, quant).bytes + trainable * 4) / w_div;
    t.gradient_bytes = trainable * 4 / g_div;
    t.optimizer_bytes = opt / o_div;
    if (quant) t.notes.push_back("frozen base weights: " + quant->describe());
  }
  t.activations = training_activations(dims, o.sequence_length, o.batch, e, o.attention, o.grad_checkpointing);
  if (o.method == TrainMethod::kQlora) {
    // bitsandbytes dequantizes one layer's weight to the compute dtype for each matmul.
    double largest = 0;
    for (const auto& l : linear_layers(tree, dims.vocab))
      if (l.is_linear() && !l.output_head)
        largest = std::max(largest, static_cast<double>(l.in) * static_cast<double>(l.out) * e);
    t.activations.parts.push_back({"dequantized weight (one layer)", largest});
    t.activations.bytes += largest;
    t.dequant_workspace_bytes = largest;
  }
  t.activation_bytes = t.activations.bytes;
  t.overhead_bytes = o.overhead_bytes;
  if (o.method != TrainMethod::kFull)
    t.notes.push_back("activations as for full fine-tuning: backward runs through every frozen layer");
  if (stage > 0 && o.gpus > 1)
    t.notes.push_back(fmt::format("{} over {} GPUs: figures are per GPU", o.fsdp ? "FSDP (FULL_SHARD)"
                                                                          : fmt::format("ZeRO-{}", stage), o.gpus));
  return t;
}

}  // namespace memfit
