#include "deepseek_layers.h"

#include <fmt/format.h>

#include "memfit/model/keep_fp32.h"

namespace memfit::arch {

MlaDims read_mla(const Config& c, const MlaDims& def) {
  MlaDims m;
  const auto q_lora = c.json().find("q_lora_rank");
  const bool compressed = q_lora == c.json().end() || !q_lora->is_null();
  m.q_lora_rank = compressed ? c.dim_or({"q_lora_rank"}, def.q_lora_rank) : 0;
  m.kv_lora_rank = c.dim_or({"kv_lora_rank"}, def.kv_lora_rank);
  m.qk_rope_head_dim = c.dim_or({"qk_rope_head_dim"}, def.qk_rope_head_dim);
  m.qk_nope_head_dim = c.dim_or({"qk_nope_head_dim"}, def.qk_nope_head_dim);
  m.v_head_dim = c.dim_or({"v_head_dim"}, def.v_head_dim);
  return m;
}

namespace {

void indexer_block(TreeBuilder& b, const std::string& prefix, std::int64_t hidden,
                   std::int64_t q_lora, const IndexerDims& x) {
  auto m = b.module("indexer", prefix + "Indexer");
  nn::linear(b, "wq_b", q_lora, x.heads * x.head_dim, false);
  nn::linear(b, "wk", hidden, x.head_dim, false);
  nn::layer_norm(b, "k_norm", x.head_dim, true);
  nn::linear(b, "weights_proj", hidden, x.heads, false);
}

}  // namespace

void mla_attention(TreeBuilder& b, const LlamaLikeSpec& s, const DecoderDims& d, const MlaDims& m,
                   bool bias, const IndexerDims& indexer) {
  auto attn = b.module("self_attn", s.prefix + "Attention");
  const std::int64_t q_head = m.qk_nope_head_dim + m.qk_rope_head_dim;
  if (m.q_lora_rank == 0) {
    nn::linear(b, "q_proj", d.hidden, d.heads * q_head, false);
  } else {
    nn::linear(b, "q_a_proj", d.hidden, m.q_lora_rank, bias);
    nn::rms_norm(b, "q_a_layernorm", m.q_lora_rank, s.norm_class);
    nn::linear(b, "q_b_proj", m.q_lora_rank, d.heads * q_head, false);
  }
  nn::linear(b, "kv_a_proj_with_mqa", d.hidden, m.latent(), bias);
  nn::rms_norm(b, "kv_a_layernorm", m.kv_lora_rank, s.norm_class);
  nn::linear(b, "kv_b_proj", m.kv_lora_rank, d.heads * (m.qk_nope_head_dim + m.v_head_dim), false);
  nn::linear(b, "o_proj", d.heads * m.v_head_dim, d.hidden, bias);
  if (!s.rope_class.empty()) layer_rotary(b, s, m.qk_rope_head_dim, d.positions);
  if (indexer.heads > 0) indexer_block(b, s.prefix, d.hidden, m.q_lora_rank, indexer);
}

void deepseek_moe(TreeBuilder& b, const DeepseekMoeSpec& m, std::int64_t hidden,
                  std::string_view act) {
  auto block = b.module("mlp", m.prefix + "MoE");
  gated_experts(b, m.prefix + "MLP", m.routed, hidden, m.width, false, act);
  {
    auto gate = b.module("gate", m.router_class);
    b.param("weight", {m.routed, hidden});
    if (m.score_bias && m.score_bias_buffer)
      b.buffer("e_score_correction_bias", {m.routed}, DType::kF32, true);
    else if (m.score_bias)
      b.param("e_score_correction_bias", {m.routed});
  }
  if (m.shared > 0)
    gated_mlp(b, "shared_experts", m.prefix + "MLP", hidden, m.width * m.shared, false, act);
}

void keep_score_bias_fp32(TensorTree& tree, bool stored_fp32) {
  keep_in_fp32(tree, {"e_score_correction_bias"}, KeepFp32::kHalfLoads, stored_fp32);
}

void set_mla(ModelDims& dims, const MlaDims& m) {
  for (LayerDims& l : dims.per_layer) {
    l.attention = AttentionKind::kMla;
    l.mla = m;
    l.k_head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
    l.v_head_dim = m.v_head_dim;
    l.rope.rotary_dims = m.qk_rope_head_dim;
  }
}

std::vector<bool> deepseek_moe_layers(const Config& c, std::int64_t layers,
                                      std::int64_t first_dense_default) {
  std::vector<bool> sparse(static_cast<std::size_t>(layers));
  if (auto types = c.string_list({"mlp_layer_types"})) {
    if (static_cast<std::int64_t>(types->size()) != layers)
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: 'mlp_layer_types' has {} entries for {} layers", c.where(),
                              types->size(), layers));
    for (std::size_t i = 0; i < sparse.size(); ++i) {
      const std::string& t = (*types)[i];
      if (t != "dense" && t != "sparse")
        throw Error(ErrorCode::kInvalidValue,
                    fmt::format("{}: 'mlp_layer_types'[{}] is '{}'; expected 'dense' or 'sparse'",
                                c.where(), i, t));
      sparse[i] = t == "sparse";
    }
    return sparse;
  }
  const std::int64_t first = c.repeats_or({"first_k_dense_replace"}, first_dense_default);
  const std::int64_t freq = c.dim_or({"moe_layer_freq"}, 1);
  for (std::int64_t i = 0; i < layers; ++i)
    sparse[static_cast<std::size_t>(i)] = i >= first && i % freq == 0;
  return sparse;
}

}  // namespace memfit::arch
