// The Llama-shaped decoder (decoder.h) in ATen ops, eager attention as transformers computes it:
// modeling_llama.py (4.40 for the golden Llama; 5.0 for the rest, whose block is the same),
// modeling_gemma2.py / modeling_gemma3.py (5.0) for the sandwich norms, soft-capping and sliding
// layers, masking_utils.py (5.0) for the window: a query at position i sees keys j with
// i − window < j ≤ i. Norms, softmax and logits in float32 whatever the compute dtype.
#include "decoder.h"

#include <cmath>
#include <limits>
#include <tuple>
#include <unordered_set>

#include <fmt/format.h>

#include "decoder_ops.h"
#include "failure.h"
#include "load_plan.h"

namespace memfit::torchrt {
namespace {

// [B, kv, S, d] → [B, kv * rep, S, d] (transformers' repeat_kv).
at::Tensor repeat_kv(const at::Tensor& x, std::int64_t rep) {
  if (rep == 1) return x;
  const auto b = x.size(0), kv = x.size(1), s = x.size(2), d = x.size(3);
  return x.unsqueeze(2).expand({b, kv, rep, s, d}).reshape({b, kv * rep, s, d});
}

// Which keys each query sees: [T, S] bool, queries at positions S−T … S−1.
at::Tensor attention_mask(std::int64_t T, std::int64_t S, std::int64_t window, const at::Device& device) {
  auto allowed = at::ones({T, S}, at::TensorOptions().dtype(at::kBool).device(device)).tril(S - T);
  if (window > 0) allowed = allowed.triu(S - T - window + 1);
  return allowed;
}

at::Tensor soft_cap(const at::Tensor& x, double cap) { return cap > 0 ? at::tanh(x / cap) * cap : x; }

class DecoderProgram final : public ModelProgram {
 public:
  DecoderProgram(DecoderSpec spec, const TensorTree& tree) : s_(std::move(spec)) {
    const std::string embed = s_.base + "embed_tokens.weight";
    stages_.push_back({"embed", {embed}, {embed}});
    for (std::size_t i = 0; i < s_.layers.size(); ++i) {
      const std::string block = s_.base + "layers." + std::to_string(i);
      stages_.push_back({block, tensors_under(tree, block)});
    }
    stages_.push_back({"head", {s_.base + "norm.weight", s_.lm_head}});
    for (const auto& st : stages_) present_.insert(st.weights.begin(), st.weights.end());
    ops_.norm = s_.norm;
    ops_.act = s_.act;
    ops_.eps = s_.eps;
    ops_.present = &present_;
  }
  DecoderProgram(const DecoderProgram&) = delete;  // ops_ points into present_
  DecoderProgram& operator=(const DecoderProgram&) = delete;

  std::int64_t layers() const override { return static_cast<std::int64_t>(s_.layers.size()); }

  void prepare(ForwardState& s) const override {
    tables_.clear();
    for (const RopeSpec& r : s_.ropes)
      tables_.push_back(rope_tables(r, s.past, s.input_ids.size(1), s.input_ids.device()));
  }

  void run(std::size_t stage, const StageWeights& w, ForwardState& s) const override {
    if (stage == 0) return embed(w, s);
    if (stage == stages_.size() - 1) {
      const auto h = ops_.rms_norm(s.hidden, w[s_.base + "norm.weight"]);
      s.logits = soft_cap(w.linear(h, s_.lm_head), s_.final_softcap).to(at::kFloat);
      return;
    }
    block(static_cast<std::size_t>(stage) - 1, stages_[stage].name + ".", w, s);
  }

 private:
  void embed(const StageWeights& w, ForwardState& s) const {
    s.hidden = w.embedding(s_.base + "embed_tokens.weight", s.input_ids);
    // GemmaModel: hidden * torch.tensor(hidden_size ** 0.5, dtype=hidden.dtype) — the scale
    // rounded to the hidden dtype first.
    if (s_.embed_scale)
      s.hidden = s.hidden * at::scalar_tensor(std::sqrt(static_cast<double>(s_.hidden)), s.hidden.options());
  }

  // q, k, v [B, heads|kv, T, head_dim] before RoPE.
  std::tuple<at::Tensor, at::Tensor, at::Tensor> project(const std::string& a, const at::Tensor& x,
                                                         const StageWeights& w) const {
    const auto B = x.size(0), T = x.size(1);
    const auto qd = s_.heads * s_.head_dim, kd = s_.kv_heads * s_.head_dim;
    at::Tensor q, k, v;
    if (s_.fused_qkv) {
      const auto qkv = ops_.linear(x, w, a + "qkv_proj");
      q = qkv.narrow(-1, 0, qd);
      k = qkv.narrow(-1, qd, kd);
      v = qkv.narrow(-1, qd + kd, kd);
    } else {
      q = ops_.linear(x, w, a + "q_proj");
      k = ops_.linear(x, w, a + "k_proj");
      v = ops_.linear(x, w, a + "v_proj");
    }
    q = q.view({B, T, s_.heads, s_.head_dim});
    k = k.view({B, T, s_.kv_heads, s_.head_dim});
    v = v.view({B, T, s_.kv_heads, s_.head_dim});
    if (s_.qk_norm) {  // Qwen3Attention / Gemma3Attention: per head, before the transpose and RoPE
      q = ops_.rms_norm(q, w[a + "q_norm.weight"]);
      k = ops_.rms_norm(k, w[a + "k_norm.weight"]);
    }
    return {q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)};
  }

  at::Tensor attention(std::size_t layer, const std::string& a, const at::Tensor& x, const StageWeights& w,
                       ForwardState& s) const {
    const DecoderLayerSpec& L = s_.layers[layer];
    const auto B = x.size(0), T = x.size(1);
    auto [q, k, v] = project(a, x, w);
    const RopeTables& rope = tables_.at(L.rope);
    q = apply_rope(q, rope);
    k = apply_rope(k, rope);
    std::tie(k, v) = s.cached_kv(static_cast<std::int64_t>(layer), k, v, L.window);
    const auto rep = s_.heads / s_.kv_heads;
    k = repeat_kv(k, rep);
    v = repeat_kv(v, rep);
    const auto S = k.size(2);
    auto scores = at::matmul(q, k.transpose(2, 3)) / std::sqrt(s_.score_scale_dim);
    scores = soft_cap(scores, s_.attn_softcap);
    const auto allowed = attention_mask(T, S, L.window, q.device());
    scores = at::where(allowed, scores, masked_value(scores));
    const auto probs = at::softmax(scores, -1, at::kFloat).to(q.scalar_type());
    const auto out = at::matmul(probs, v).transpose(1, 2).contiguous().reshape({B, T, s_.heads * s_.head_dim});
    return ops_.linear(out, w, a + "o_proj");
  }

  at::Tensor mlp(std::size_t layer, const std::string& n, const at::Tensor& x, const StageWeights& w) const {
    switch (s_.layers[layer].mlp) {
      case MlpKind::kGated:
        return ops_.gated_mlp(x, w, n + s_.mlp_module + ".", s_.gate, s_.up, s_.down);
      case MlpKind::kFusedGated:
        return ops_.fused_gated_mlp(x, w, n + s_.mlp_module + ".");
      case MlpKind::kMoe:
        return ops_.moe(x, w, n + s_.moe.module + ".", s_.moe);
    }
    return x;
  }

  void block(std::size_t layer, const std::string& n, const StageWeights& w, ForwardState& s) const {
    at::Tensor& h = s.hidden;
    auto a = attention(layer, n + "self_attn.", ops_.rms_norm(h, w[n + "input_layernorm.weight"]), w, s);
    if (s_.sandwich_norms) {
      a = ops_.rms_norm(a, w[n + "post_attention_layernorm.weight"]);
      h = h + a;
      auto m = mlp(layer, n, ops_.rms_norm(h, w[n + "pre_feedforward_layernorm.weight"]), w);
      h = h + ops_.rms_norm(m, w[n + "post_feedforward_layernorm.weight"]);
      return;
    }
    h = h + a;
    h = h + mlp(layer, n, ops_.rms_norm(h, w[n + "post_attention_layernorm.weight"]), w);
  }

  DecoderSpec s_;
  std::unordered_set<std::string> present_;  // every tensor the stages read (optional biases)
  DecoderOps ops_;
  // RoPE tables of the current forward, one per s_.ropes (set by the embedding stage).
  mutable std::vector<RopeTables> tables_;
};

bool same_rope(const RopeDims& a, const RopeDims& b) {
  return a.theta == b.theta && a.scaled == b.scaled && a.scaling_type == b.scaling_type && a.factor == b.factor &&
         a.rotary_dims == b.rotary_dims && a.params == b.params && a.short_factor == b.short_factor &&
         a.long_factor == b.long_factor;
}

bool has_tensor(const TensorTree& tree, const std::string& name) { return tree.find_tensor(name) >= 0; }

// Where the decoder sits, and its output embedding: a causal LM ("model." + "lm_head"), a base
// model (no head: the input embedding), a composite's language model (stored as
// language_model.model.* + language_model.lm_head, or current transformers' model.language_model.*).
void locate(const TensorTree& tree, DecoderSpec& d, const std::string& where) {
  const std::pair<const char*, const char*> layouts[] = {{"model.", "lm_head.weight"},
                                                         {"language_model.model.", "language_model.lm_head.weight"},
                                                         {"model.language_model.", "lm_head.weight"},
                                                         {"language_model.", "lm_head.weight"},
                                                         {"", "lm_head.weight"}};
  for (const auto& [base, head] : layouts) {
    if (!has_tensor(tree, std::string(base) + "embed_tokens.weight")) continue;
    d.base = base;
    d.lm_head = has_tensor(tree, head) ? resolve_alias(tree, head) : d.base + "embed_tokens.weight";
    return;
  }
  throw Failure{FailureKind::kUnsupported,
                fmt::format("{}: no decoder embed_tokens.weight in the model's tree ({})", where, tree.class_name())};
}

}  // namespace

DecoderSpec decoder_spec(const Model& model, const TensorTree& tree) {
  const ModelDims& dims = program_dims(model);
  const std::string& where = model.config.where();
  const Config c = text_config(model.config);
  DecoderSpec d;
  d.where = where;
  locate(tree, d, where);
  d.hidden = dims.hidden;
  d.heads = dims.heads;
  d.kv_heads = dims.kv_heads;
  d.head_dim = dims.head_dim;
  d.eps = dims.norm_eps;
  d.score_scale_dim = static_cast<double>(d.head_dim);
  d.act = activation(c.string_or({"hidden_act"}, "silu"), where);
  if (d.heads <= 0 || d.kv_heads <= 0 || d.heads % d.kv_heads != 0)
    throw Failure{FailureKind::kInvalidInput,
                  fmt::format("{}: num_attention_heads {} is not a multiple of num_key_value_heads {}", where,
                              d.heads, d.kv_heads)};
  if (dims.attention_error) raise(*dims.attention_error);
  const std::int64_t original = c.count_or({"original_max_position_embeddings"}, 0);
  for (std::size_t i = 0; i < dims.per_layer.size(); ++i) {
    const LayerDims& l = dims.per_layer[i];
    if (l.attention != AttentionKind::kFull && l.attention != AttentionKind::kSliding)
      throw Failure{FailureKind::kUnsupported,
                    fmt::format("{}: layer {}'s attention kind is not one memfit-torch runs (full or sliding)",
                                where, i)};
    if (l.heads != d.heads || l.kv_heads != d.kv_heads)
      throw Failure{FailureKind::kUnsupported,
                    fmt::format("{}: layer {} has {} heads / {} KV heads, the model {} / {}: per-layer head counts "
                                "are not supported", where, i, l.heads, l.kv_heads, d.heads, d.kv_heads)};
    DecoderLayerSpec L;
    L.window = l.attention == AttentionKind::kSliding ? l.window : 0;
    L.mlp = l.moe.experts > 0 ? MlpKind::kMoe : MlpKind::kGated;
    RopeDims rope = l.rope;
    if (rope.theta == 0) rope.theta = 10000.0;  // LlamaConfig's rope_theta
    std::size_t k = 0;
    while (k < d.ropes.size() && !same_rope(d.ropes[k].dims, rope)) ++k;
    if (k == d.ropes.size()) {
      RopeSpec r{rope, d.head_dim, dims.max_positions, original, where};
      check_rope(r);
      d.ropes.push_back(std::move(r));
    }
    L.rope = k;
    d.layers.push_back(L);
  }
  return d;
}

void set_router(DecoderSpec& spec, const Model& model, const TensorTree& tree) {
  for (std::size_t i = 0; i < spec.layers.size(); ++i) {
    if (spec.layers[i].mlp != MlpKind::kMoe) continue;
    const int router = tree.find_tensor(spec.base + "layers." + std::to_string(i) + "." + spec.moe.module + ".gate.weight");
    if (router >= 0) spec.moe.experts = tree.tensors[static_cast<std::size_t>(router)].shape.at(0);
    break;
  }
  spec.moe.top_k = text_config(model.config).count_or({"num_experts_per_tok"}, program_dims(model).experts_per_token);
}

std::unique_ptr<ModelProgram> make_decoder(DecoderSpec spec, const TensorTree& tree) {
  const MoeSpec& m = spec.moe;
  for (const DecoderLayerSpec& l : spec.layers)
    if (l.mlp == MlpKind::kMoe && (m.experts < 1 || m.top_k < 1 || m.top_k > m.experts))
      throw Failure{FailureKind::kInvalidInput,
                    fmt::format("{}: a routed MoE needs 1 ≤ num_experts_per_tok ≤ its experts; got {} of {}",
                                spec.where, m.top_k, m.experts)};
  return std::make_unique<DecoderProgram>(std::move(spec), tree);
}

}  // namespace memfit::torchrt
