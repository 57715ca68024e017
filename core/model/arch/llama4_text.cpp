// Llama 4's text model (transformers models/llama4/modeling_llama4.py and
// configuration_llama4.py, 4.51 through main): Llama4TextModel, Llama4ForCausalLM
// (model_type llama4_text; llama4.cpp's Llama4ForConditionalGeneration holds it as
// language_model).
//
// Llama's layout (llama_like.h) with prefix Llama4Text and the MLP under `feed_forward`. Layer i
// is MoE when it is in `moe_layers` (default: every interleave_moe_layer_step-th, from step − 1):
// Llama4TextMoe {experts: Llama4TextExperts with fused gate_up_proj [experts, hidden,
// 2 × intermediate_size] and down_proj [experts, intermediate_size, hidden] (stored that way),
// act_fn; router [experts, hidden]; shared_expert: a Llama4TextMLP(intermediate_size)}; the
// other layers hold a dense Llama4TextMLP(intermediate_size_mlp). Llama4TextMLP registers
// gate/up/down and `activation_fn`. Attention: q/k/v/o (attention_bias), plus a parameter-free
// L2 qk_norm on RoPE layers when use_qk_norm.
//
// `no_rope_layers[i]` is 1 where layer i uses RoPE (default: all but every
// no_rope_layer_interval-th, 4); `layer_types` defaults to chunked attention on RoPE layers and
// full attention on NoPE ones, chunks of attention_chunk_size (8192) tokens. The dims say so per
// layer: a NoPE layer has no RoPE (theta 0).
#include <algorithm>

#include <fmt/format.h>

#include "families.h"
#include "layer_types.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

struct Llama4Layers {
  std::vector<bool> rope, moe;
  std::vector<std::string> types;
};

std::vector<bool> rope_layers(const Config& c, std::int64_t layers) {
  std::vector<bool> out(static_cast<std::size_t>(layers));
  const auto given = c.int_list({"no_rope_layers"});
  if (given && !given->empty()) {
    // "at least the same length as the number of layers".
    if (static_cast<std::int64_t>(given->size()) < layers)
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: 'no_rope_layers' has {} entries for {} layers", c.where(),
                              given->size(), layers));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = (*given)[i] != 0;
    return out;
  }
  const std::int64_t interval = c.dim_or({"no_rope_layer_interval"}, 4);
  for (std::int64_t i = 0; i < layers; ++i) out[static_cast<std::size_t>(i)] = (i + 1) % interval != 0;
  return out;
}

std::vector<bool> moe_layers(const Config& c, std::int64_t layers) {
  std::vector<bool> out(static_cast<std::size_t>(layers));
  if (auto given = c.int_list({"moe_layers"})) {
    for (std::int64_t i : *given)
      if (i < layers) out[static_cast<std::size_t>(i)] = true;
    return out;
  }
  const std::int64_t step = c.dim_or({"interleave_moe_layer_step"}, 1);
  for (std::int64_t i = step - 1; i < layers; i += step) out[static_cast<std::size_t>(i)] = true;
  return out;
}

// Gate, up, down and `activation_fn` (Llama4TextMLP's name for it).
void text_mlp(TreeBuilder& b, std::string_view name, std::int64_t hidden, std::int64_t inter,
              std::string_view act) {
  auto m = b.module(name, "Llama4TextMLP");
  nn::linear(b, "gate_proj", hidden, inter, false);
  nn::linear(b, "up_proj", hidden, inter, false);
  nn::linear(b, "down_proj", inter, hidden, false);
  nn::activation(b, "activation_fn", act);
}

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // Llama4TextConfig defaults (tie_word_embeddings=False, head_dim=128).
  DecoderDims d = read_decoder_dims(c, {202048, 5120, 8192, 48, 40, 8, 4096 * 32, false, 128});
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, false);
  d.norm_eps = read_norm_eps(c, {"rms_norm_eps"}, 1e-5);
  const std::int64_t dense_inter = c.dim_or({"intermediate_size_mlp"}, 16384);
  const std::int64_t experts = c.repeats_or({"num_local_experts"}, 16);
  const bool qk_norm = c.flag_or({"use_qk_norm"}, true);
  const std::vector<bool> rope = rope_layers(c, d.layers);
  const std::vector<bool> moe = moe_layers(c, d.layers);
  LlamaLikeSpec s;
  s.prefix = "Llama4Text";
  s.norm_class = "Llama4TextRMSNorm";
  s.rope = LegacyRope::kNone;
  s.rope_class = "";
  auto attention = [&](TreeBuilder& b, std::int64_t layer) {
    auto a = b.module("self_attn", "Llama4TextAttention");
    nn::linear(b, "q_proj", d.hidden, d.heads * d.head_dim, d.q_bias);
    nn::linear(b, "k_proj", d.hidden, d.kv_heads * d.head_dim, d.k_bias);
    nn::linear(b, "v_proj", d.hidden, d.kv_heads * d.head_dim, d.v_bias);
    nn::linear(b, "o_proj", d.heads * d.head_dim, d.hidden, d.o_bias);
    if (qk_norm && rope[static_cast<std::size_t>(layer)]) b.stateless("qk_norm", "Llama4TextL2Norm");
  };
  auto mlp = [&](TreeBuilder& b, std::int64_t layer) {
    if (!moe[static_cast<std::size_t>(layer)]) return text_mlp(b, "feed_forward", d.hidden, dense_inter, d.act);
    auto m = b.module("feed_forward", "Llama4TextMoe");
    {
      auto e = b.module("experts", "Llama4TextExperts");
      b.param("gate_up_proj", {experts, d.hidden, 2 * d.inter});
      b.param("down_proj", {experts, d.inter, d.hidden});
      nn::activation(b, "act_fn", d.act);
    }
    nn::linear(b, "router", d.hidden, experts, false, "Llama4Router");
    text_mlp(b, "shared_expert", d.hidden, d.inter, d.act);
  };
  // Dense layers' width for the dims; MoE layers get theirs from set_moe.
  DecoderDims dims_view = d;
  dims_view.inter = dense_inter;
  TensorTree tree = build_decoder(r, r.class_name, s, dims_view, mlp, attention);
  if (r.dims && *r.dims) {
    ModelDims& m = **r.dims;
    set_moe(m, {experts, c.count_or({"num_experts_per_tok"}, 1), 1, d.inter, d.inter}, true, moe);
    try {
      std::vector<std::string> fallback;
      for (bool with_rope : rope) fallback.push_back(with_rope ? "chunked_attention" : "full_attention");
      const auto types = layer_types_or(c, d.layers, std::move(fallback));
      m.attention_error.reset();
      // attention_chunk_size null: the chunked mask has no chunk, every layer sees all tokens.
      const auto chunk_key = c.json().find("attention_chunk_size");
      const bool no_chunk = chunk_key != c.json().end() && chunk_key->is_null();
      set_layer_kinds(m, types, no_chunk ? 0 : c.count_or({"attention_chunk_size"}, 8192), "layer_types");
      const RopeDims with = rope_of_type(c, "full_attention", 500000.0, d.head_dim);
      for (std::size_t i = 0; i < m.per_layer.size(); ++i)
        m.per_layer[i].rope = rope[i] ? with : RopeDims{};
    } catch (const Error& e) {
      m.attention_error = e;
    }
  }
  return tree;
}

}  // namespace

const Family& llama4_text_family() {
  static const Family f{"transformers",
                        {"llama4_text"},
                        {{"Llama4TextModel", "AutoModel"}, {"Llama4ForCausalLM", "AutoModelForCausalLM"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
