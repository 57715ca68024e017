// native/torch/decoder.h — the one Llama-shaped decoder every RoPE family runs through (Llama,
// Mistral, Qwen2, Qwen3, Qwen3-MoE, Mixtral, Gemma 1/2/3, Phi-3): embeddings → N blocks →
// final norm → lm_head, each block pre-norm attention + MLP with residuals. The families differ
// only by the switches of DecoderSpec; a family file fills them from the model's dims and config
// (llama.cpp's hparams + one graph builder, rather than one copy of the block per family).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model_program.h"
#include "rope.h"

namespace memfit::torchrt {

// How an RMSNorm applies its weight.
enum class NormStyle {
  kLlama,  // LlamaRMSNorm: w * normalize(x.float()).to(x.dtype)
  kGemma,  // GemmaRMSNorm: (normalize(x.float()) * (1 + w.float())).to(x.dtype)
};

enum class Activation { kSilu, kGeluTanh, kGelu };
// hidden_act / hidden_activation → Activation; throws Failure(kUnsupported) naming it.
Activation activation(const std::string& name, const std::string& where);

enum class MlpKind {
  kGated,       // down(act(gate(x)) * up(x)) — gate_proj/up_proj/down_proj (Mixtral: w1/w3/w2)
  kFusedGated,  // Phi-3: gate_up_proj split in halves (gate first), down_proj
  kMoe,         // top-k routed experts of kGated MLPs (DecoderSpec::moe)
};

// A sparse MoE block (Mixtral's block_sparse_moe, Qwen3-MoE's mlp): router `gate`, experts.N.
struct MoeSpec {
  std::string module;                   // "block_sparse_moe" / "mlp"
  std::string gate = "gate_proj", up = "up_proj", down = "down_proj";  // an expert's projections
  std::int64_t experts = 0, top_k = 0;
  // The top-k probabilities (softmax over all experts in float32) divided by their sum:
  // Mixtral always, Qwen3-MoE when norm_topk_prob.
  bool renormalize = true;
};

struct DecoderLayerSpec {
  std::int64_t window = 0;  // sliding window in tokens (a query sees the last `window`); 0: full
  std::size_t rope = 0;     // index into DecoderSpec::ropes
  MlpKind mlp = MlpKind::kGated;
};

struct DecoderSpec {
  std::string where;    // the config, for messages
  std::string base;     // where embed_tokens, layers and norm sit: "model.", "language_model.model."
  std::string lm_head;  // the output embedding's tensor (tied: the input embedding's)
  std::int64_t hidden = 0, heads = 0, kv_heads = 0, head_dim = 0;
  double eps = 1e-6;
  NormStyle norm = NormStyle::kLlama;
  Activation act = Activation::kSilu;
  bool fused_qkv = false;      // Phi-3: qkv_proj [q | k | v]
  bool qk_norm = false;        // Qwen3, Gemma 3: an RMSNorm over head_dim on each query/key head
  bool sandwich_norms = false; // Gemma 2/3: post_attention_layernorm on the attention output,
                               // pre/post_feedforward_layernorm around the MLP
  bool embed_scale = false;    // Gemma: embeddings × sqrt(hidden), in the hidden dtype
  // Attention scores: q·kᵀ / sqrt(score_scale_dim) (head_dim; Gemma 2/3: query_pre_attn_scalar).
  double score_scale_dim = 0;
  double attn_softcap = 0, final_softcap = 0;  // Gemma 2: cap·tanh(x / cap); 0: none
  std::string mlp_module = "mlp";              // the dense MLP's module
  std::string gate = "gate_proj", up = "up_proj", down = "down_proj";
  MoeSpec moe;
  std::vector<RopeSpec> ropes;  // the distinct rotary embeddings (Gemma 3: global and local)
  std::vector<DecoderLayerSpec> layers;
};

// The spec every family starts from: sizes, eps, per-layer windows and RoPE from the Model's dims
// (one RopeSpec per distinct RopeDims), the decoder's prefix and lm_head from the tree (a
// composite's language_model included). Throws Failure naming the config when the dims cannot
// be run (heads not a multiple of KV heads, an attention kind this decoder has not).
DecoderSpec decoder_spec(const Model& model, const TensorTree& tree);

// The routed layers' experts (the router's rows in the tree) and top-k (num_experts_per_tok,
// read as given: make_decoder names a bad one) for spec.moe.module; call after marking the
// routed layers.
void set_router(DecoderSpec& spec, const Model& model, const TensorTree& tree);

// The program over `spec`; each block reads the tensors of its layer in `tree`. Throws
// Failure(kInvalidInput) naming the config when a routed layer has no experts or a top-k outside
// 1 … experts.
std::unique_ptr<ModelProgram> make_decoder(DecoderSpec spec, const TensorTree& tree);

}  // namespace memfit::torchrt
