// Pieces shared by the state-space and hybrid families (mamba, falcon_mamba, mamba2, jamba,
// falcon_h1, nemotron_h, granitemoehybrid): the two Mamba mixers as transformers registers them,
// the recurrent state each keeps per sequence, the per-layer dims of a hybrid stack, and the
// heads put on a base model.
//
// The state per sequence is what transformers' caches hold for one mixer, in elements:
//   Mamba (v1) — MambaCache / Jamba's HybridMambaAttentionDynamicCache:
//     conv_states [batch, intermediate, conv_kernel], ssm_states [batch, intermediate, state]
//   Mamba-2 — Mamba2Cache, FalconHybridMambaAttentionDynamicCache, GraniteMoeHybrid's
//     HybridMambaAttentionDynamicCache, and current transformers' LinearAttention cache layers,
//     which take the shape of the first state the mixer writes:
//     conv_states [batch, intermediate + 2 × n_groups × state, conv_kernel],
//     ssm_states  [batch, heads, head_dim, state]
// The convolution keeps conv_kernel columns (not conv_kernel − 1): every mixer pads its input to
// conv_kernel before it stores it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common.h"
#include "function_ref.h"
#include "memfit/model/model_dims.h"

namespace memfit::arch::ssm {

// The Mamba (v1) selective-scan mixer (MambaMixer, FalconMambaMixer, JambaMambaMixer).
struct Mamba1Mixer {
  std::int64_t hidden = 0, inner = 0, state = 0, conv_kernel = 0, dt_rank = 0;
  bool conv_bias = true;  // conv1d
  bool proj_bias = false; // in_proj and out_proj
  std::string act = "silu";
  RecurrentDims per_sequence() const { return {inner * conv_kernel, inner * state, conv_kernel}; }
};

// Its tensors, inside the mixer's module, in MambaMixer's registration order: conv1d (depthwise,
// [inner, 1, conv_kernel]), act, in_proj [2 × inner, hidden], x_proj [dt_rank + 2 × state, inner],
// dt_proj [inner, dt_rank] with bias, A_log [inner, state], D [inner], out_proj [hidden, inner].
void mamba1_tensors(TreeBuilder& b, const Mamba1Mixer& m);

// The Mamba-2 (SSD) mixer (Mamba2Mixer, NemotronHMamba2Mixer, FalconH1Mixer, BambaMixer).
struct Mamba2Mixer {
  std::int64_t hidden = 0, inner = 0, heads = 0, head_dim = 0, groups = 0, state = 0;
  std::int64_t conv_kernel = 0;
  bool conv_bias = true;
  bool in_bias = false, out_bias = false;  // in_proj, out_proj
  std::string act = "silu";
  std::string norm_class;  // the gated RMSNorm over `inner`; empty: none (Falcon-H1's mamba_rms_norm)
  std::int64_t conv_dim() const { return inner + 2 * groups * state; }
  // Call check_mixer() first: it makes sure these products fit.
  RecurrentDims per_sequence() const { return {conv_dim() * conv_kernel, heads * head_dim * state, conv_kernel}; }
};

// Its tensors, in Mamba2Mixer's registration order: act, conv1d (depthwise, [conv_dim, 1,
// conv_kernel]), in_proj [inner + conv_dim + heads, hidden], dt_bias [heads], A_log [heads], the
// gated norm [inner], D [heads], out_proj [hidden, inner].
void mamba2_tensors(TreeBuilder& b, const Mamba2Mixer& m);

// A Mamba-2 mixer from the mamba_* keys of Bamba-style configs (Falcon-H1, GraniteMoeHybrid), with
// their classes' defaults: mamba_n_heads 128, mamba_d_head "auto", mamba_n_groups 1,
// mamba_d_state 256, mamba_d_conv 4, mamba_conv_bias true, mamba_proj_bias false (in and out).
// `inner` is the family's intermediate width; `inner_key` names it in errors.
Mamba2Mixer bamba_mixer(const Config& c, std::int64_t hidden, std::int64_t inner,
                        const char* inner_key, const std::string& act);

// Before a Mamba-2 mixer is built: heads × head_dim must equal inner (kInvalidValue; every Mamba-2
// config class checks it), and conv_dim and the state per sequence must be sizes that fit
// (kOverflow: a hostile config must not overflow them).
void check_mixer(const Config& c, const Mamba2Mixer& m, const char* inner_key);

// a × b for two sizes read from `c`; kOverflow naming `what` when it is not a plausible size.
std::int64_t checked_mul(const Config& c, std::int64_t a, std::int64_t b, const char* what);

// time_step_rank / mamba_dt_rank: "auto" (the classes' default) is ceil(hidden / 16), else the
// number given.
std::int64_t dt_rank(const Config& c, const char* key, std::int64_t hidden);

// int(expand × hidden), the mixers' intermediate width, from `expand_key`.
std::int64_t expanded(const Config& c, const char* expand_key, double expand_default,
                      std::int64_t hidden);
// intermediate_size when the config has it (a kwarg overrides MambaConfig's own value), else
// expanded(c, "expand", …).
std::int64_t mamba_inner(const Config& c, std::int64_t hidden, double expand_default);

// Per-layer dims of one layer's kind.
LayerDims recurrent_layer(const RecurrentDims& state);
LayerDims attention_layer(std::int64_t heads, std::int64_t kv_heads, std::int64_t head_dim,
                          const RopeDims& rope);
LayerDims mlp_layer();  // kNone: a layer without attention or state (an MLP / MoE block only)

// The model-wide sizes of a state-space or hybrid stack.
struct StackSizes {
  std::int64_t hidden = 0, vocab = 0, positions = 0;
  bool tie = false;
  double norm_eps = 0;
  // The MLP width summary when no layer has an MLP (a pure Mamba stack: the mixer's own
  // intermediate_size, which the activation formulas size the in_proj output with).
  std::int64_t mixer_width = 0;
};

// ModelDims over `layers`: the summary heads / kv_heads / head_dim are the first attention
// layer's (0 in a stack without attention), the intermediate width the widest layer's.
ModelDims stack_dims(const StackSizes& s, std::vector<LayerDims> layers);

// set_moe() over the layers marked in `sparse`; nothing when none is (a config's expert keys
// without a MoE layer leave the model dense).
void set_moe_layers(ModelDims& d, const MoeDims& moe, const std::vector<bool>& sparse);

// How a family lays out its classes: the base model is an embedding, `layers` blocks and a final
// RMSNorm; a head class puts it under `base_attr`.
struct StackLayout {
  std::string base_class;   // "MambaModel"
  std::string base_attr;    // "backbone" or "model"
  std::string embedding;    // the embedding's name inside the base model: "embeddings", "embed_tokens"
  std::string final_norm, norm_class;  // "norm_f", "MambaRMSNorm"
  std::vector<std::string> no_split;
  std::int64_t hidden = 0, vocab = 0, layers = 0;
  bool tie = false;
};

// Adds block N inside layers (opening its own module "N": the class may differ per layer).
using BlockFn = FunctionRef<void(TreeBuilder& b, std::int64_t layer)>;

// Builds `class_name`: the base class — embedding [vocab, hidden], layers.N by `block`, the final
// norm, then `tail` (a model-level rotary) — or it under `base_attr` with *ForCausalLM's lm_head
// (tied to the embedding when `tie`) or *ForSequenceClassification's score [num_labels, hidden].
TensorTree build_stack(const BuildRequest& r, const StackLayout& l, const BlockFn& block,
                       FunctionRef<void(TreeBuilder&)> tail = {});

}  // namespace memfit::arch::ssm
