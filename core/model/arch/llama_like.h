// The Llama-shaped decoder shared by Llama, Mistral, Mixtral, Qwen2, Qwen2-MoE, Gemma, Phi-3,
// OLMo, StarCoder2 and DeepSeek (transformers 4.40 and the DeepSeek remote code), and by the
// current families Granite, OLMo 2, OLMoE, Cohere, PhiMoE, SmolLM3, ERNIE 4.5, GLM-4, MiniMax-M2.
//
// Every one of them is laid out the same way:
//
//   <P>ForCausalLM                       (or <P>Model alone, or a classification head)
//     model: <P>Model
//       embed_tokens                     Embedding [vocab, hidden]
//       layers.N: <P>DecoderLayer
//         self_attn: <P>Attention        q/k/v/o (or Phi-3's o_proj + fused qkv_proj, or MLA)
//           rotary_emb                   4.40 only: per-layer rotary buffers (see LegacyRope)
//         mlp                            family-specific (dense, MoE, ...)
//         input_layernorm
//         post_attention_layernorm
//       norm
//       rotary_emb                       current transformers only: one inv_freq per model
//     lm_head | score | classifier
//
// A family describes what differs (class-name prefix, norm, attention biases and layout, how
// the 4.40 rotary registers its buffers, the MLP of each layer) and build_decoder() does the rest.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common.h"
#include "function_ref.h"

namespace memfit::arch {

// How the 4.40 attention layer's rotary embedding registers its buffers.
enum class LegacyRope {
  kNone,        // inv_freq registered as None (Gemma, Phi-3 in 4.40): no tensor at all
  kUnderscore,  // inv_freq + _cos_cached/_sin_cached (Llama, OLMo: the 4.38-4.40 style)
  kPlain,       // inv_freq + cos_cached/sin_cached (Mistral and its copies, remote code)
};

enum class NormKind {
  kRms,        // weight [dim] (LlamaRMSNorm, GemmaRMSNorm, ...)
  kLayerNorm,  // torch.nn.LayerNorm: weight and bias [dim]
  kParamFree,  // OlmoLayerNorm: no parameters at all
};

enum class QkNormShape {
  kHead,        // [head_dim]
  kAllHeads,    // [heads * head_dim] for q, [kv_heads * head_dim] for k
  kHeadsByDim,  // [heads, head_dim] and [kv_heads, head_dim]
};

struct DecoderDims {
  std::int64_t vocab = 0, hidden = 0, inter = 0, layers = 0, heads = 0, kv_heads = 0;
  std::int64_t head_dim = 0, positions = 0;
  std::int64_t rope_dim = 0;          // dims rotated by the 4.40 per-layer rotary
  std::int64_t current_rope_dim = 0;  // dims rotated in current transformers (partial_rotary_factor)
  bool q_bias = false, k_bias = false, v_bias = false, o_bias = false;
  bool tie = false;
  std::string act = "silu";  // hidden_act: the MLP's act_fn module
  double norm_eps = 1e-6;    // rms_norm_eps (no tensor depends on it; the LibTorch programs do)
};

// Defaults of a configuration class (transformers 4.40) for the keys every decoder config has.
struct DecoderDefaults {
  std::int64_t vocab, hidden, inter, layers, heads;
  std::int64_t kv_heads;   // 0: num_attention_heads
  std::int64_t positions;  // max_position_embeddings
  bool tie;                // tie_word_embeddings
  std::int64_t head_dim = 0;  // 0: hidden_size / num_attention_heads (must divide)
};

struct LlamaLikeSpec {
  std::string prefix;      // "Mistral": MistralModel, MistralDecoderLayer, MistralAttention, ...
  std::string norm_class;  // "MistralRMSNorm", "LayerNorm", "OlmoLayerNorm"
  NormKind norm = NormKind::kRms;
  bool fused_qkv = false;  // Phi-3: o_proj registered first, then qkv_proj [q+2kv, hidden]
  LegacyRope rope = LegacyRope::kUnderscore;
  std::string rope_class;  // the 4.40 per-layer rotary class
  // kLegacyOnly for transformers' own models (gone from current transformers); kAlways for
  // remote code, which allocates them whatever the transformers version.
  BufferEra rope_era = BufferEra::kLegacyOnly;
  bool current_rotary = true;  // current transformers: model.rotary_emb.inv_freq
  std::string token_head = "score";  // name of the *ForTokenClassification head
  // Dropout modules where a family registers them (Phi-3): after embed_tokens, and in each
  // layer after input_layernorm. Empty: none (Llama's dropouts are floats, not modules).
  std::string embed_dropout;
  std::vector<std::string> layer_dropouts;
  // Qwen3, Gemma 3: a per-head RMSNorm over head_dim on queries and keys (q_norm, k_norm),
  // registered after o_proj.
  bool qk_norm = false;
  // Gemma 2/3: norms each layer adds after post_attention_layernorm, in order.
  std::vector<std::string> extra_layer_norms;
  std::string base_class;                     // "" : prefix + "Model" (Gemma 3: Gemma3TextModel)
  std::string embedding_class = "Embedding";  // Gemma 3: Gemma3TextScaledWordEmbedding
  bool embed_scale_buffer = false;            // its non-persistent scalar embed_scale
  bool local_rotary = false;                  // Gemma 3: a second model-level rotary_emb_local
  // What the q/k norms (qk_norm) normalize: one head (Qwen3), every head's width at once (OLMo 2,
  // OLMoE, MiniMax-M2: [heads*head_dim] and [kv_heads*head_dim]), or Cohere's per-head LayerNorm
  // whose weight is [heads, head_dim].
  QkNormShape qk_norm_shape = QkNormShape::kHead;
  // Which of the two standard layer norms a layer registers: OLMo 2 has no input_layernorm,
  // Cohere's parallel block no post_attention_layernorm.
  bool input_norm = true;
  bool post_attention_norm = true;
  bool lm_head_bias = false;  // PhiMoE: lm_head with a bias (lm_head_bias)
};

// Called inside a decoder layer's scope to add one block (it opens its own module). A reference:
// the callable must outlive the build_decoder call (function_ref.h).
using LayerFn = FunctionRef<void(TreeBuilder& b, std::int64_t layer)>;

// Reads the shared keys with the configuration class's defaults. num_key_value_heads: absent →
// the class default, explicit null → num_attention_heads (what every 4.40 config class does).
// Biases, rope dims and head_dim can be adjusted by the family afterwards.
DecoderDims read_decoder_dims(const Config& c, const DecoderDefaults& def);

// 4.40 Llama-style rotary class: <P>LinearScalingRotaryEmbedding for "linear",
// <P>DynamicNTKScalingRotaryEmbedding for "dynamic", else <P>RotaryEmbedding.
std::string llama_rope_class(const Config& c, std::string_view prefix);

void decoder_norm(TreeBuilder& b, std::string_view name, const LlamaLikeSpec& s, std::int64_t dim);
// The per-layer rotary module of 4.40 (or of remote code) named "rotary_emb".
void layer_rotary(TreeBuilder& b, const LlamaLikeSpec& s, std::int64_t rope_dim,
                  std::int64_t positions);
// q_norm and k_norm after o_proj, shaped as s.qk_norm_shape says.
void qk_norms(TreeBuilder& b, const LlamaLikeSpec& s, const DecoderDims& d);
// The standard attention block ("self_attn"): q/k/v/o or Phi-3's fused layout, then rotary.
void decoder_attention(TreeBuilder& b, const LlamaLikeSpec& s, const DecoderDims& d);
// gate_proj, up_proj [inter, hidden], down_proj [hidden, inter] and the act_fn module (`act`:
// the config's hidden_act), in that order.
void gated_mlp(TreeBuilder& b, std::string_view name, std::string_view cls, std::int64_t hidden,
               std::int64_t inter, bool bias = false, std::string_view act = "silu");

// Nemotron's MLP (Arcee and Nemotron-H copy it): up_proj [inter, hidden], down_proj
// [hidden, inter] and the act_fn module (relu2 in all three), no gate; the members alone for a
// module the caller opens (Nemotron-H's experts).
void gateless_mlp_members(TreeBuilder& b, std::int64_t hidden, std::int64_t inter, bool bias, std::string_view act);
void gateless_mlp(TreeBuilder& b, std::string_view name, std::string_view cls, std::int64_t hidden,
                  std::int64_t inter, bool bias, std::string_view act);

// Qwen2-MoE's sparse block ("mlp") as its checkpoints store it, shared by Qwen3-Next: gate
// [experts, hidden], experts.N = <prefix>MLP(moe_inter), shared_expert = <prefix>MLP(shared_inter),
// shared_expert_gate [1, hidden]; no biases.
void qwen_sparse_moe(TreeBuilder& b, std::string_view prefix, const DecoderDims& d,
                     std::int64_t experts, std::int64_t moe_inter, std::int64_t shared_inter);

// "experts" = ModuleList of `n` gated MLPs (gate/up/down) of class `cls`, named 0..n-1: how
// checkpoints store routed experts (current transformers fuses them on load, same bytes).
void gated_experts(TreeBuilder& b, std::string_view cls, std::int64_t n, std::int64_t hidden,
                   std::int64_t width, bool bias, std::string_view act);

// Mixtral's "experts": ModuleList of `n` experts of class `cls`, each w1 [width, hidden], w2
// [hidden, width], w3 [width, hidden] and act_fn (PhiMoE and MiniMax-M2 store theirs the same way).
void mixtral_experts(TreeBuilder& b, std::string_view cls, std::int64_t n, std::int64_t hidden,
                     std::int64_t width, std::string_view act);

// Phi-3's fused MLP (GLM-4 copies it): gate_up_proj [2*inter, hidden], down_proj [hidden, inter]
// and the activation_fn module, no biases.
void fused_gated_mlp(TreeBuilder& b, std::string_view name, std::string_view cls,
                     std::int64_t hidden, std::int64_t inter, std::string_view act);

// Qwen2-MoE / Qwen3-MoE: which of `layers` layers hold the sparse MoE block — not listed in
// mlp_only_layers, every decoder_sparse_step-th, and only when there are experts.
std::vector<bool> qwen_moe_layers(const Config& c, std::int64_t layers, std::int64_t experts);

// The model's dims from the same DecoderDims: every layer full attention with d's heads and
// `rope`, then the config's window rules (model_dims.h). MoE and MLA families add theirs to the
// result. (GPT-2 shares it: its layers have the same shape, without RoPE.)
ModelDims decoder_model_dims(const Config& c, const DecoderDims& d, const RopeDims& rope);
// The same without the window rules: for families whose layer kinds do not follow them
// (hybrid linear-attention models, gpt-oss's default alternation).
ModelDims uniform_decoder_dims(const DecoderDims& d, const RopeDims& rope);

// The base model's contents (embed_tokens, layers, norm, rotary_emb) inside the current module:
// for models that nest the decoder under another name (a VLM's language_model). `tail`, when set,
// adds what a layer registers after its norms (GraniteMoeShared's shared_mlp).
void decoder_base(TreeBuilder& b, const LlamaLikeSpec& s, const DecoderDims& d, const LayerFn& mlp,
                  const LayerFn& attention = {}, const LayerFn& tail = {});

// Builds `class_name`: <P>Model, <P>ForCausalLM, <P>ForSequenceClassification or
// <P>ForTokenClassification. `mlp` adds each layer's MLP block; `attention`, when set, replaces
// decoder_attention (DeepSeek's MLA); `tail` as decoder_base's. Fills r.dims (when asked) with
// decoder_model_dims().
TensorTree build_decoder(const BuildRequest& r, std::string_view class_name, const LlamaLikeSpec& s,
                         const DecoderDims& d, const LayerFn& mlp, const LayerFn& attention = {},
                         const LayerFn& tail = {});

}  // namespace memfit::arch
