// memfit/memory/training.h — memory to fine-tune a model: full (mixed precision), LoRA and QLoRA,
// with AdamW, 8-bit AdamW, Adafactor or SGD, optionally sharded over N GPUs (ZeRO-1/2/3, FSDP).
//
// Full fine-tuning follows the ZeRO paper's accounting (Rajbhandari et al. 2020, §3): 16-bit
// weights and gradients, fp32 master weights and optimizer states; ZeRO stage 1 shards the
// master weights and optimizer states, stage 2 also the gradients, stage 3 (and FSDP's
// FULL_SHARD) also the weights. LoRA keeps the base frozen (16-bit, or NF4 for QLoRA) and trains
// PEFT's adapters in fp32. Activations follow Korthikanti et al. 2022 ("Reducing Activation
// Recomputation in Large Transformer Models", §4.1: 34·s·b·h + 5·a·s²·b bytes per layer),
// generalised to GQA and gated MLPs (docs/memory-model.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memfit/memory/inference.h"
#include "memfit/memory/lora.h"
#include "memfit/memory/options.h"
#include "memfit/memory/quantization.h"
#include "memfit/model/dtype.h"
#include "memfit/model/model_dims.h"
#include "memfit/model/tensor_tree.h"

namespace memfit {

// Bytes of optimizer state for one trainable fp32 tensor of this shape:
//   AdamW 8·n; 8-bit AdamW (bitsandbytes) 2·n + 2·4·⌈n/256⌉, tensors under 4096 values in fp32;
//   Adafactor (transformers, beta1=None) 4·(rows + cols) for ≥2-D, 4·n for 1-D; SGD momentum 4·n.
double optimizer_state_bytes(Optimizer o, const Shape& shape);

struct TrainingOptions {
  TrainMethod method = kRunDefaults.train_method;
  std::int64_t rank = kRunDefaults.rank;
  std::vector<std::string> targets{std::string(kRunDefaults.targets)};
  Optimizer optimizer = kRunDefaults.optimizer;
  bool grad_checkpointing = false;
  int zero_stage = kRunDefaults.zero_stage;  // 0..3
  bool fsdp = false;   // FULL_SHARD: like stage 3
  std::int64_t gpus = kRunDefaults.gpus;
  std::int64_t sequence_length = 512, batch = kRunDefaults.batch;  // per GPU micro-batch
  DType compute = DType::kBF16;
  AttentionImpl attention = kRunDefaults.attention;
  double overhead_bytes = kRunDefaults.overhead_bytes;
};

struct TrainingActivations {
  std::vector<MemoryPart> parts;  // per layer × layers (or checkpoints + one layer), logits
  double bytes = 0;
};

// Activations kept for the backward pass of one micro-batch.
TrainingActivations training_activations(const ModelDims& dims, std::int64_t sequence_length,
                                         std::int64_t batch, double element_bytes,
                                         AttentionImpl attention, bool grad_checkpointing);
// Korthikanti et al.'s per-layer bytes, generalised (see docs/memory-model.md).
double activation_bytes_per_layer(const ModelDims& dims, std::int64_t s, std::int64_t b,
                                  double element_bytes, AttentionImpl attention);

struct TrainingEstimate {
  TrainMethod method = TrainMethod::kFull;
  std::uint64_t trainable_parameters = 0;
  std::size_t lora_modules = 0;
  double weights_bytes = 0;         // per GPU
  double gradient_bytes = 0;
  double master_weights_bytes = 0;  // fp32 copy (full fine-tuning in 16-bit)
  double optimizer_bytes = 0;
  double activation_bytes = 0;     // includes dequant_workspace_bytes
  double dequant_workspace_bytes = 0;  // QLoRA: one layer dequantized (does not grow with s, b)
  double overhead_bytes = 0;
  TrainingActivations activations;
  std::vector<std::string> notes;
  double total_bytes() const {
    return weights_bytes + gradient_bytes + master_weights_bytes + optimizer_bytes +
           activation_bytes + overhead_bytes;
  }
};

// `base_quant`: the checkpoint's own quantization (a GPTQ model fine-tuned with LoRA); QLoRA
// uses NF4 with double quantization when it is empty.
TrainingEstimate estimate_training(const TensorTree& tree, const ModelDims& dims,
                                   const TrainingOptions& options,
                                   const std::optional<QuantScheme>& base_quant = std::nullopt);

}  // namespace memfit
