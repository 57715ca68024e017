// memfit/memory/linear_layers.h — the matrix-multiply layers of a tensor tree, found generically.
//
// What PEFT's `all-linear`, the bitsandbytes / GPTQ / AWQ / FP8 quantizers and LoRA all act on:
// modules whose class is torch.nn.Linear or a subclass (a class name ending in "Linear":
// FalconLinear, NonDynamicallyQuantizableLinear, …) or transformers' Conv1D (GPT-2), holding a
// 2-D `weight`. Embeddings and convolutions are listed too (LoRA can target them), marked so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memfit/model/tensor_tree.h"

namespace memfit {

enum class LayerKind : std::uint8_t { kLinear, kConv1D, kEmbedding, kConv };

struct LinearLayer {
  int module = -1;        // index into tree.modules
  int weight = -1;        // tensor index of `<module>.weight`
  LayerKind kind = LayerKind::kLinear;
  std::int64_t in = 0, out = 0;  // Embedding: in = num_embeddings, out = embedding_dim;
                                 // Conv: in = in_channels × kernel elements, out = out_channels
  bool in_block = false;  // inside a numbered block (`model.layers.7.…`)
  bool output_head = false;  // the output embeddings: vocab-sized Linear outside the blocks
                             // (lm_head, Whisper's proj_out), which all-linear and the
                             // quantizers leave alone
  bool is_linear() const { return kind == LayerKind::kLinear || kind == LayerKind::kConv1D; }
};

// Every such layer, in module order. `vocab` (0: unknown) identifies the output head; when no
// module carries a Linear class (a checkpoint tree without a config), every 2-D `weight` outside
// embeddings and norms is taken as a Linear.
std::vector<LinearLayer> linear_layers(const TensorTree& tree, std::int64_t vocab);

}  // namespace memfit
