// OLMo 2 (transformers models/olmo2/modular_olmo2.py, first in 4.47) and OLMoE
// (models/olmoe/modeling_olmoe.py, first in 4.45); read on main: Olmo2Model, Olmo2ForCausalLM;
// OlmoeModel, OlmoeForCausalLM.
//
// OLMo 3 (transformers models/olmo3/modular_olmo3.py, first in 4.57; read on main, with
// configuration_olmo3.py's defaults): Olmo3Model, Olmo3ForCausalLM. Its tree is OLMo 2's under the
// Olmo3 prefix (the same post-norms and whole-projection q/k norms, one model-level rotary_emb);
// what differs is the KV cache: layer_types (default: every 4th layer full, the others
// "sliding_attention") with sliding_window (default 4096) on the sliding layers, and RoPE scaling
// (rope_scaling, or rope_parameters["full_attention"]) applied only on the full layers — the
// sliding ones rotate with rope_theta unscaled.
//
// All three put an RMSNorm over the whole projection on queries and keys: q_norm [heads*head_dim],
// k_norm [kv_heads*head_dim] (OLMoE writes them as hidden_size and (hidden/heads)*kv_heads, the
// same), registered after o_proj; q/k/v/o take attention_bias; one model-level rotary_emb.
// OLMo 2 normalizes after each block instead of before: its layer registers self_attn, mlp,
// post_attention_layernorm, post_feedforward_layernorm (no input_layernorm). OLMoE keeps Llama's
// two norms; its mlp is OlmoeSparseMoeBlock {gate [num_experts, hidden], experts.N = OlmoeMLP
// (intermediate_size, one expert's width)} in every layer, no shared expert. Checkpoints store
// each expert apart; current transformers fuses them on load (same bytes).
#include "families.h"
#include "layer_types.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

LlamaLikeSpec olmo_spec(const char* prefix) {
  LlamaLikeSpec s;
  s.prefix = prefix;
  s.norm_class = std::string(prefix) + "RMSNorm";
  s.rope = LegacyRope::kNone;
  s.qk_norm = true;
  s.qk_norm_shape = QkNormShape::kAllHeads;
  return s;
}

// OLMo 2's layout under `prefix` (Olmo2Config and Olmo3Config share these defaults).
TensorTree build_post_norm(const BuildRequest& r, const char* prefix, DecoderDims& d) {
  const Config& c = r.config;
  d = read_decoder_dims(c, {50304, 4096, 11008, 32, 32, 0, 2048, false});
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, false);
  LlamaLikeSpec s = olmo_spec(prefix);
  s.input_norm = false;
  s.extra_layer_norms = {"post_feedforward_layernorm"};
  const std::string mlp_class = std::string(prefix) + "MLP";
  return build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    gated_mlp(b, "mlp", mlp_class, d.hidden, d.inter, false, d.act);
  });
}

TensorTree build_olmo2(const BuildRequest& r) {
  DecoderDims d;
  return build_post_norm(r, "Olmo2", d);
}

// Olmo3Config: layer_types default to three sliding layers, then a full one; sliding_window
// defaults to 4096 (null: no window). The full layers take the config's RoPE scaling, the sliding
// ones rope_theta alone (500000 by default on main).
void olmo3_layers(ModelDims& m, const Config& c, std::int64_t layers, std::int64_t rotary_dims) {
  std::vector<std::string> pattern;
  for (std::int64_t i = 0; i < layers; ++i)
    pattern.push_back((i + 1) % 4 ? "sliding_attention" : "full_attention");
  const std::vector<std::string> types = layer_types_or(c, layers, std::move(pattern));
  const bool null_window = c.json().contains("sliding_window") && c.json()["sliding_window"].is_null();
  const std::int64_t window = null_window ? 0 : c.dim_or({"sliding_window"}, 4096);
  set_layer_kinds(m, types, window, "layer_types (default: every 4th layer full)");
  const RopeDims full = rope_of_type(c, "full_attention", 500000.0, rotary_dims);
  RopeDims sliding = rope_of_type(c, "sliding_attention", 500000.0, rotary_dims);
  const auto rp = c.json().find("rope_parameters");
  if (rp == c.json().end() || !rp->is_object() || !rp->contains("sliding_attention")) {
    sliding = RopeDims{};
    sliding.theta = rope_number(c, "rope_theta", 500000.0);
    sliding.rotary_dims = rotary_dims;
  }
  for (std::size_t i = 0; i < m.per_layer.size(); ++i)
    m.per_layer[i].rope = types[i] == "sliding_attention" ? sliding : full;
}

TensorTree build_olmo3(const BuildRequest& r) {
  DecoderDims d;
  TensorTree tree = build_post_norm(r, "Olmo3", d);
  if (r.dims && *r.dims && !(*r.dims)->attention_error) {
    try {
      olmo3_layers(**r.dims, r.config, d.layers, d.current_rope_dim);
    } catch (const Error& e) {
      (*r.dims)->attention_error = e;  // the KV cache's error, not the estimate's
    }
  }
  return tree;
}

TensorTree build_olmoe(const BuildRequest& r) {
  const Config& c = r.config;
  // OlmoeConfig defaults.
  DecoderDims d = read_decoder_dims(c, {50304, 2048, 2048, 16, 16, 0, 4096, false});
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, false);
  const std::int64_t experts = c.repeats_or({"num_experts"}, 64);
  TensorTree tree = build_decoder(r, r.class_name, olmo_spec("Olmoe"), d, [&](TreeBuilder& b, std::int64_t) {
    auto moe = b.module("mlp", "OlmoeSparseMoeBlock");
    nn::linear(b, "gate", d.hidden, experts, false);
    gated_experts(b, "OlmoeMLP", experts, d.hidden, d.inter, false, d.act);
  });
  if (r.dims && *r.dims)
    set_moe(**r.dims, {experts, c.count_or({"num_experts_per_tok"}, 8), 0, d.inter, 0}, false);
  return tree;
}

}  // namespace

const Family& olmo2_family() {
  static const Family f{"transformers",
                        {"olmo2"},
                        {{"Olmo2Model", "AutoModel"}, {"Olmo2ForCausalLM", "AutoModelForCausalLM"}},
                        &build_olmo2};
  return f;
}

const Family& olmo3_family() {
  static const Family f{"transformers",
                        {"olmo3"},
                        {{"Olmo3Model", "AutoModel"}, {"Olmo3ForCausalLM", "AutoModelForCausalLM"}},
                        &build_olmo3};
  return f;
}

const Family& olmoe_family() {
  static const Family f{"transformers",
                        {"olmoe"},
                        {{"OlmoeModel", "AutoModel"}, {"OlmoeForCausalLM", "AutoModelForCausalLM"}},
                        &build_olmoe};
  return f;
}

}  // namespace memfit::arch
