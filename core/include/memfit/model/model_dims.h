// memfit/model/model_dims.h — the few numbers of a transformer that runtime memory depends on, read
// from config.json the way transformers' configuration classes read them (their attribute_map
// aliases: `n_embd` / `hidden_size` / `d_model`, …), plus what only the tensor tree knows (gated
// MLP, MoE experts, the output head). No `model_type` switch: keys alone decide.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "memfit/model/config.h"
#include "memfit/model/tensor_tree.h"

namespace memfit {

struct ModelDims {
  std::int64_t hidden = 0;        // hidden_size / n_embd / d_model
  std::int64_t layers = 0;        // decoder layers (num_hidden_layers / n_layer / decoder_layers …)
  std::int64_t encoder_layers = 0;  // encoder-decoder: encoder_layers / num_layers; else 0
  std::int64_t heads = 0;         // query heads of a (decoder) layer
  std::int64_t kv_heads = 0;      // key/value heads (GQA/MQA), first layer when per-layer
  std::int64_t head_dim = 0;      // head_dim / d_kv / hidden ÷ heads
  std::int64_t intermediate = 0;  // MLP width one token goes through (MoE: top-k experts + shared)
  std::int64_t vocab = 0;         // vocab_size (0 when the model has none, e.g. vision)
  std::int64_t max_positions = 0; // max_position_embeddings / n_positions / … (0: unknown)
  bool gated_mlp = false;         // SwiGLU-style: gate and up projections (from the tree)
  bool dropout = false;           // any attention/hidden dropout probability > 0
  bool encoder_decoder = false;
  bool generative = false;        // has a decoder that generates tokens (a KV cache applies)
  // MoE: experts per layer and experts a token is routed to (0 when dense).
  std::int64_t experts = 0, experts_per_token = 0;
};

// The (text, decoder) config: `text_config` when the top level has no layer count, else itself.
Config text_config(const Config& config);

// Reads the dims; `tree` supplies gated_mlp and, with `class_name`, whether the model generates.
// Throws Error(kMissingKey) naming the keys when a needed one is absent.
ModelDims read_model_dims(const Config& config, const TensorTree& tree);

// Parameters a token actually multiplies with: all of them, minus the routed experts it skips
// (modules under `.experts.`, scaled by 1 − experts_per_token / experts).
double active_parameters(const TensorTree& tree, const ModelDims& dims);

}  // namespace memfit
