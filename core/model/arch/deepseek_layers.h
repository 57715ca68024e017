// DeepSeek-style attention and MoE blocks, shared by every family that copies them: DeepSeek
// V2/V3 and Kimi K2 (remote code), DeepSeek-V3.2 and GLM-MoE-DSA (MLA plus the DSA indexer,
// transformers), GLM-4.5 (the MoE block).
//
// MLA ("self_attn", <P>Attention), in registration order:
//   q_proj [heads*(nope+rope), hidden] when q_lora_rank is null, else
//   q_a_proj [q_lora, hidden] (bias=attention_bias), q_a_layernorm [q_lora], q_b_proj
//   [heads*(nope+rope), q_lora]; kv_a_proj_with_mqa [kv_lora+rope, hidden] (bias=attention_bias),
//   kv_a_layernorm [kv_lora], kv_b_proj [heads*(nope+v), kv_lora], o_proj [hidden, heads*v]
//   (bias=attention_bias); then the remote code's per-layer rotary_emb, or DSA's indexer.
// DSA indexer ("indexer"): wq_b [index_n_heads*index_head_dim, q_lora], wk [index_head_dim,
//   hidden], k_norm = LayerNorm(index_head_dim) (weight and bias), weights_proj [index_n_heads,
//   hidden].
// MoE ("mlp", <P>MoE): experts.N = <P>MLP(moe_intermediate_size), gate = router {weight
//   [routed, hidden], e_score_correction_bias [routed] where routing is noaux_tc}, shared_experts
//   = <P>MLP(moe_intermediate_size * n_shared_experts) when there are shared experts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llama_like.h"

namespace memfit::arch {

// q_lora_rank (null: queries not compressed), kv_lora_rank and the head widths, with the
// configuration class's defaults for absent keys.
MlaDims read_mla(const Config& c, const MlaDims& defaults);

struct IndexerDims {
  std::int64_t heads = 0, head_dim = 0;  // index_n_heads, index_head_dim (0 heads: no indexer)
};

// The MLA block of one layer. `s.rope_class` non-empty: the remote code's per-layer rotary. An
// indexer reads the compressed query: the caller checks q_lora_rank is not null.
void mla_attention(TreeBuilder& b, const LlamaLikeSpec& s, const DecoderDims& d, const MlaDims& m,
                   bool bias, const IndexerDims& indexer = {});

struct DeepseekMoeSpec {
  std::string prefix;        // <P>MoE, <P>MLP
  std::string router_class;  // "MoEGate" (remote code), "<P>TopkRouter" (transformers)
  bool score_bias = false;   // e_score_correction_bias [routed]
  // transformers registers it as a float32 buffer; the remote code as a parameter.
  bool score_bias_buffer = false;
  std::int64_t routed = 0, shared = 0, width = 0, active = 0;
};

void deepseek_moe(TreeBuilder& b, const DeepseekMoeSpec& m, std::int64_t hidden,
                  std::string_view act);

// transformers' DeepseekV3PreTrainedModel (and the classes that inherit it: Glm4Moe, Glm4MoeLite,
// GlmMoeDsa, DeepseekV32) lists `_keep_in_fp32_modules_strict = ["e_score_correction_bias"]`.
// `stored_fp32`: DeepSeek's own checkpoints hold it in float32 (DeepSeek-V3 inference/model.py,
// Gate: `bias = nn.Parameter(torch.empty(n_routed_experts, dtype=torch.float32))`).
void keep_score_bias_fp32(TensorTree& tree, bool stored_fp32);

// Every layer's attention becomes MLA with these ranks (K: nope+rope wide, V: v_head_dim).
void set_mla(ModelDims& dims, const MlaDims& m);

// Layer i holds the MoE block: `mlp_layer_types` ("dense"/"sparse") when the config lists them,
// else i >= first_k_dense_replace and i % moe_layer_freq == 0.
std::vector<bool> deepseek_moe_layers(const Config& c, std::int64_t layers,
                                      std::int64_t first_dense_default);

}  // namespace memfit::arch
