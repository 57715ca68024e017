// MiniMax-M2 / M2.5 (remote code: the Hub repos' modeling_minimax_m2.py, which their config's
// auto_map names; transformers' models/minimax_m2/modular_minimax_m2.py on main is the same model
// and was read for the layout): MiniMaxM2Model, MiniMaxM2ForCausalLM.
//
// Mixtral's layout with three additions. Attention: q/k/v/o without bias, head_dim from the
// config (default 128), then q_norm [heads*head_dim] and k_norm [kv_heads*head_dim] (use_qk_norm,
// qk_norm_type "per_layer": one RMSNorm over all heads), RoPE over rotary_dim of head_dim. The
// layer's block_sparse_moe = {gate [num_local_experts, hidden], experts.N = {w1, w2, w3, act_fn}
// (intermediate_size is one expert's width), then e_score_correction_bias [num_local_experts], a
// float32 buffer for its sigmoid routing}; no shared expert. One model-level rotary_emb.
// The config's multi-token-prediction modules (use_mtp, num_mtp_modules) are not built by the
// model class: it holds num_hidden_layers layers only.
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // MiniMaxM2Config defaults.
  DecoderDims d = read_decoder_dims(c, {200064, 3072, 1536, 62, 48, 8, 196608, false, /*head_dim=*/128});
  if (c.has("rotary_dim")) d.current_rope_dim = c.dim({"rotary_dim"});
  const std::int64_t experts = c.repeats_or({"num_local_experts", "num_experts"}, 256);
  LlamaLikeSpec s;
  s.prefix = "MiniMaxM2";
  s.norm_class = "MiniMaxM2RMSNorm";
  s.rope = LegacyRope::kNone;
  s.qk_norm = c.flag_or({"use_qk_norm"}, true);
  s.qk_norm_shape = QkNormShape::kAllHeads;
  TensorTree tree = build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    auto moe = b.module("block_sparse_moe", "MiniMaxM2SparseMoeBlock");
    nn::linear(b, "gate", d.hidden, experts, false);
    mixtral_experts(b, "MiniMaxM2MLP", experts, d.hidden, d.inter, d.act);
    b.buffer("e_score_correction_bias", {experts}, DType::kF32, true);
  });
  if (r.dims && *r.dims)
    set_moe(**r.dims, {experts, c.count_or({"num_experts_per_tok"}, 8), 0, d.inter, 0}, false);
  return tree;
}

}  // namespace

const Family& minimax_m2_family() {
  static const Family f{"transformers",
                        {"minimax_m2"},
                        {{"MiniMaxM2Model", "AutoModel"}, {"MiniMaxM2ForCausalLM", "AutoModelForCausalLM"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
