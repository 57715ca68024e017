// memfit/model/model_dims.h — the model's dimensions, read once with its tree (llama.cpp's
// llama_hparams): model-wide sizes, and per layer what its attention keeps (full, a sliding
// window, a chunk, MLA's latent, a recurrent state, nothing), its heads, RoPE and MoE.
//
// A family file fills them from the same reads that build its tensor tree (arch.h's
// BuildRequest::dims). Families that do not fill them get read_model_dims(), the generic reader:
// transformers' attribute_map aliases (`n_embd` / `hidden_size` / `d_model`, …), no `model_type`
// switch. Either way the per-layer attention kinds follow one set of rules, in transformers' order
// of precedence (docs/memory-model.md):
//   layer_types → sliding_window_pattern (or cache_implementation "hybrid", pattern 2) →
//   use_sliding_window: false → use_sliding_window + max_window_layers → sliding_window (all).
// Everything after build_model() — the KV cache, activations, training, LoRA, the planner, the
// LibTorch programs — reads these, never the config's architecture keys.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memfit/error.h"
#include "memfit/model/config.h"
#include "memfit/model/tensor_tree.h"

namespace memfit {

// What one layer's attention keeps per sequence.
enum class AttentionKind : std::uint8_t {
  kFull,       // K and V of every past token
  kSliding,    // K and V of the last `window` tokens
  kChunked,    // K and V of the tokens of the current chunk of `window` (Llama 4's chunked attention)
  kMla,        // multi-head latent attention: one compressed latent per token (DeepSeek-V2/V3)
  kRecurrent,  // a fixed-size state whatever the context (linear attention, SSM)
  kNone,       // no attention in this layer (num_key_value_heads 0, an MLP-only layer)
};

// Multi-head latent attention (DeepSeek-V2/V3): q_lora_rank 0 means queries are not compressed.
struct MlaDims {
  std::int64_t q_lora_rank = 0, kv_lora_rank = 0;
  std::int64_t qk_rope_head_dim = 0, qk_nope_head_dim = 0, v_head_dim = 0;
  // DeepSeek-V3.2's DSA lightning indexer keeps keys of its own, one vector per token (0: the
  // layer has no indexer of its own).
  std::int64_t index_head_dim = 0;
  // What vLLM and llama.cpp cache per token: the latent and the shared rotary key.
  std::int64_t latent() const { return kv_lora_rank + qk_rope_head_dim; }
};

// A recurrent layer's state per sequence, in elements: the short convolution's window and the
// SSM / linear-attention state (heads × head_dim × state size).
struct RecurrentDims {
  std::int64_t conv_state = 0, ssm_state = 0;
  // The conv state's columns as transformers keeps them (conv_kernel); vLLM and llama.cpp keep
  // one fewer. 0: unknown, the state counted as given.
  std::int64_t conv_kernel = 0;
  // The SSM state in float32 whatever the model's dtype (config.json's mamba_ssm_cache_dtype:
  // Nemotron-H); else in the engine's state dtype.
  bool ssm_f32 = false;
  std::int64_t elements() const { return conv_state + ssm_state; }
};

struct RopeDims {
  double theta = 0;             // rope_theta (0: the layer has no rotary embedding, or unknown)
  bool scaled = false;          // rope_scaling present
  std::string scaling_type;     // rope_scaling's "type" / "rope_type"; "" when absent
  double factor = 1;            // rope_scaling's "factor"
  std::int64_t rotary_dims = 0; // dims rotated (partial_rotary_factor × head_dim)
  // The scaling object's other entries, for a runtime that computes the scaled frequencies
  // (transformers' modeling_rope_utils): each number by key (booleans as 0/1) —
  // original_max_position_embeddings, low/high_freq_factor, beta_fast/slow, attention_factor,
  // mscale, mscale_all_dim, truncate, … — and LongRoPE's per-frequency lists. Empty unless scaled.
  std::vector<std::pair<std::string, double>> params;
  std::vector<double> short_factor, long_factor;
  // params' value for `key`, else nullopt.
  std::optional<double> param(std::string_view key) const {
    for (const auto& [k, v] : params)
      if (k == key) return v;
    return std::nullopt;
  }
};

// Mixture of experts in one layer: 0 experts means a dense MLP.
struct MoeDims {
  std::int64_t experts = 0;      // routed experts
  std::int64_t active = 0;       // routed experts a token goes through (top-k)
  std::int64_t shared = 0;       // shared experts every token goes through
  std::int64_t expert_width = 0; // one routed expert's intermediate size
  std::int64_t shared_width = 0; // the shared experts' intermediate size, all of them together
  std::int64_t token_width() const { return expert_width * active + shared_width; }
};

struct LayerDims {
  AttentionKind attention = AttentionKind::kFull;
  std::int64_t window = 0;       // kSliding: tokens in the window; kChunked: the chunk size
  bool sinks = false;            // per-head attention sinks (learned logits; nothing cached)
  std::int64_t heads = 0;        // query heads
  std::int64_t kv_heads = 0;     // key/value heads (GQA/MQA); 0: no attention (kNone)
  std::int64_t k_head_dim = 0, v_head_dim = 0;  // one cached key / value vector per head
  MlaDims mla;                   // kMla
  RecurrentDims state;           // kRecurrent
  RopeDims rope;
  MoeDims moe;
  std::int64_t intermediate = 0; // MLP width one token goes through in this layer
  bool caches_tokens() const { return attention != AttentionKind::kRecurrent && attention != AttentionKind::kNone; }
  bool windowed() const { return attention == AttentionKind::kSliding || attention == AttentionKind::kChunked; }
};

// Encoder-decoder: one cross-attention per decoder layer over the encoder's output.
struct CrossAttentionDims {
  std::int64_t layers = 0, kv_heads = 0, head_dim = 0;
  std::int64_t default_encoder_length = 0;  // max_source_positions (Whisper: 1500), else 0
};

struct ModelDims {
  std::int64_t hidden = 0;        // hidden_size / n_embd / d_model
  std::int64_t vocab = 0;         // vocab_size (0 when the model has none, e.g. vision)
  std::int64_t layers = 0;        // decoder layers (num_hidden_layers / n_layer / decoder_layers …)
  std::int64_t encoder_layers = 0;  // encoder-decoder: encoder_layers / num_layers; else 0
  std::int64_t max_positions = 0; // max_position_embeddings / n_positions / … (0: unknown)
  bool tied_embeddings = false;   // the output head shares the input embedding
  double norm_eps = 0;            // the blocks' normalization epsilon (0: unknown)
  // The first decoder layer's attention and the widest MLP a token goes through: what the
  // activation and training formulas are sized with.
  std::int64_t heads = 0, kv_heads = 0;
  std::int64_t head_dim = 0;      // head_dim / d_kv / hidden ÷ heads (MLA's K and V differ: see layers)
  std::int64_t intermediate = 0;  // MLP width one token goes through (MoE: top-k experts + shared)
  std::int64_t experts = 0, experts_per_token = 0;  // MoE, the model's routed experts (0: dense)
  bool gated_mlp = false;         // SwiGLU-style: gate and up projections (from the tree)
  bool dropout = false;           // any attention/hidden dropout probability > 0
  bool encoder_decoder = false;
  bool generative = false;        // has a decoder that generates tokens (a KV cache applies)

  // Per decoder layer, in order (per_layer.size() == layers unless attention_error is set).
  std::vector<LayerDims> per_layer;
  std::string window_rule;        // the config key that decided which layers are windowed ("" = none)
  CrossAttentionDims cross;
  // The per-layer attention could not be read (a 'layer_types' of the wrong length, a window
  // rule without its window, …): raised by the KV cache, which needs it, not by the estimate.
  std::optional<Error> attention_error;
};

// A part of the model read at build time whose failure only matters to the consumer that needs
// it (a config whose dims cannot be read still has its weights estimated): the value, or the
// error that consumer raises.
template <typename T>
struct Deferred {
  std::optional<T> value;
  std::optional<Error> error;
  bool known() const { return value.has_value() || error.has_value(); }
  // The value, nullptr when there is none; throws the error when reading failed.
  const T* get() const {
    if (error) throw *error;
    return value ? &*value : nullptr;
  }
};

// The (text, decoder) config: `text_config` when the top level has no layer count, else itself.
Config text_config(const Config& config);

// The generic reader, for families that do not fill their dims: every field from the config's
// keys alone. Throws Error(kMissingKey) naming the keys when a needed one is absent; the
// per-layer attention's errors go to attention_error.
ModelDims read_model_dims(const Config& config);

// transformers 5's RoPE object for layers of `layer_type` (modeling_rope_utils
// RotaryEmbeddingConfigMixin.standardize_rope_params): `rope_parameters[layer_type]` when the
// object is keyed by layer types (every key one of the config's `layer_types`; without that list,
// every key a "..._attention" object), else `rope_parameters` itself. nullptr when the config has
// no such object, or it is keyed by types and names no `layer_type`.
const Json* rope_parameters_of(const Config& c, std::string_view layer_type);

// The RoPE of layers of `layer_type`, read as transformers does from either layout: a legacy
// `rope_scaling` object (transformers 5's convert_rope_params_to_dict takes it over
// `rope_parameters`), else rope_parameters_of(); rope_theta from that object, else the top level,
// else `theta_default`; its rope_type (or "type") and factor. A rope_type of "default" (or
// "mrope", which transformers turns into "default") is no scaling. `rotary_dims` as the family
// computed it. Values of the wrong type are ignored, not errors: no tensor depends on them.
RopeDims read_rope(const Config& c, double theta_default, std::int64_t rotary_dims,
                   std::string_view layer_type = "full_attention");
// The first of `keys` that holds a number, else `fallback` (likewise never an error).
double read_norm_eps(const Config& c, std::initializer_list<const char*> keys, double fallback);

// Shared by the families and the generic reader. d.layers full-attention layers as the summary
// fields say (heads, kv_heads, head_dim for K and V, intermediate), with `rope`; then the config's
// window rules (above) turn full-attention layers into sliding or chunked ones. `c` is the text
// config; a rule's error goes to attention_error (the first one only).
void set_uniform_layers(ModelDims& d, const RopeDims& rope);
void apply_window_rules(ModelDims& d, const Config& c);

// MoE in the layers where `is_moe(layer)` (all when empty; the others keep their dense width),
// and the summary: a token goes through `active` experts and the shared ones; with an expert
// width of its own (`moe_width_given`), the dense width counts too when it is larger. No routed
// experts or no top-k: dense (experts = experts_per_token = 0).
void set_moe(ModelDims& d, const MoeDims& moe, bool moe_width_given,
             const std::vector<bool>& moe_layers = {});

// What the tree and the chosen class decide, for either reader: gated MLP (gate/up projections),
// whether the model generates (its class, or `architectures[0]` for a base class), dropout.
void finish_model_dims(ModelDims& d, const Config& config, const TensorTree& tree);

// Parameters a token actually multiplies with: all of them, minus the routed experts it skips
// (modules under `.experts.` and GraniteMoe's fused expert weights, scaled by
// 1 − experts_per_token / experts).
double active_parameters(const TensorTree& tree, const ModelDims& dims);
// The parameters of the routed experts (modules under `.experts.`), all of them.
double routed_expert_parameters(const TensorTree& tree);
// The share of a layer's routed experts that `tokens` tokens go through together, each to
// experts_per_token of them, routed uniformly: 1 − (1 − k/E)^tokens (1 for a dense model). Decode
// reads the weights of these experts only: one sequence reads k/E of them, a large batch all.
double experts_touched(const ModelDims& dims, std::int64_t tokens);

}  // namespace memfit
