#include "memfit/model/model_dims.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "memfit/error.h"

namespace memfit {
namespace {

bool has_any_substring(std::string_view s, std::initializer_list<std::string_view> parts) {
  for (auto p : parts)
    if (s.find(p) != std::string_view::npos) return true;
  return false;
}

// Classes that generate tokens (and so keep a KV cache): transformers' generation heads.
bool is_generation_class(std::string_view cls) {
  return has_any_substring(cls, {"CausalLM", "LMHead", "ConditionalGeneration", "Seq2SeqLM",
                                 "Text2Text", "SpeechSeq2Seq"});
}

std::string leaf_name(const std::string& dotted) {
  const auto dot = dotted.rfind('.');
  return dot == std::string::npos ? dotted : dotted.substr(dot + 1);
}

bool any_dropout(const Config& c) {
  for (const char* k : {"attention_dropout", "attn_pdrop", "resid_pdrop", "embd_pdrop",
                        "hidden_dropout", "hidden_dropout_prob", "attention_probs_dropout_prob",
                        "dropout", "dropout_rate", "activation_dropout"}) {
    auto it = c.json().find(k);
    if (it != c.json().end() && it->is_number() && it->get<double>() > 0) return true;
  }
  return false;
}

// Runs a per-layer attention rule; its error is kept for the KV cache (the first one only).
template <typename Fn>
void deferring(ModelDims& d, Fn&& fn) {
  if (d.attention_error) return;
  try {
    fn();
  } catch (const Error& e) {
    d.attention_error = e;
  }
}

// The window rules (model_dims.h, docs/memory-model.md), on the layers of `d`.
void mark_windows(const Config& c, ModelDims& d) {
  auto& layers = d.per_layer;
  const auto n = layers.size();
  // The window, and whether it came from attention_chunk_size (chunked attention).
  auto window_size = [&](const char* why) -> std::pair<std::int64_t, bool> {
    if (c.has("sliding_window")) return {c.dim({"sliding_window"}), false};
    if (c.has("attention_chunk_size")) return {c.dim({"attention_chunk_size"}), true};
    throw Error(ErrorCode::kMissingKey,
                fmt::format("{}: {} marks windowed layers but 'sliding_window' is missing",
                            c.where(), why));
  };
  auto window_layer = [&](LayerDims& l, std::int64_t window, bool chunked) {
    if (l.attention != AttentionKind::kFull) return;
    l.attention = chunked ? AttentionKind::kChunked : AttentionKind::kSliding;
    l.window = window;
  };
  if (auto types = c.string_list({"layer_types"})) {
    if (types->size() != n)
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: 'layer_types' has {} entries for {} layers", c.where(),
                              types->size(), n));
    std::int64_t window = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::string& t = (*types)[i];
      if (t == "sliding_attention" || t == "chunked_attention") {
        if (window == 0) window = window_size("'layer_types'").first;
        window_layer(layers[i], window, t == "chunked_attention");
      } else if (t != "full_attention") {
        throw Error(ErrorCode::kInvalidValue,
                    fmt::format("{}: layer {} has type '{}'; memfit sizes the KV cache of "
                                "'full_attention', 'sliding_attention' and 'chunked_attention' "
                                "layers only", c.where(), i, t));
      }
    }
    d.window_rule = "layer_types";
    return;
  }
  const bool hybrid = c.string_or({"cache_implementation"}, "") == "hybrid";
  if (c.has("sliding_window_pattern") || hybrid) {
    // transformers' HybridCache: layer i is windowed unless (i + 1) % pattern == 0.
    const std::int64_t pattern = c.dim_or({"sliding_window_pattern"}, 2);
    const auto [window, chunked] = window_size("'sliding_window_pattern'");
    for (std::size_t i = 0; i < n; ++i)
      if ((static_cast<std::int64_t>(i) + 1) % pattern != 0) window_layer(layers[i], window, chunked);
    d.window_rule = c.has("sliding_window_pattern") ? "sliding_window_pattern"
                                                     : "cache_implementation: hybrid";
    return;
  }
  if (c.has("use_sliding_window") && !c.flag_or({"use_sliding_window"}, false)) return;
  if (!c.has("sliding_window") && !c.has("attention_chunk_size")) return;
  const auto [window, chunked] = window_size("'sliding_window'");
  // Qwen2: with use_sliding_window, layers from max_window_layers on are windowed.
  const std::int64_t first = c.flag_or({"use_sliding_window"}, false)
                                 ? c.count_or({"max_window_layers"}, 0)
                                 : 0;
  for (std::size_t i = static_cast<std::size_t>(std::min<std::int64_t>(first, static_cast<std::int64_t>(n))); i < n; ++i)
    window_layer(layers[i], window, chunked);
  d.window_rule = first > 0 ? "use_sliding_window + max_window_layers" : "sliding_window";
}

// Key/value heads per layer: Falcon's rule first (new_decoder_architecture → num_kv_heads), then
// the GQA key (a number, or a list per layer: 0 is a layer without attention), then multi-query
// (Falcon-7B, GPTBigCode), then the legacy RW key.
std::vector<std::int64_t> kv_heads_per_layer(const Config& c, std::int64_t layers, std::int64_t heads) {
  if (c.flag_or({"new_decoder_architecture"}, false))
    return std::vector<std::int64_t>(static_cast<std::size_t>(layers), c.dim_or({"num_kv_heads"}, heads));
  if (auto it = c.json().find("num_key_value_heads"); it != c.json().end() && it->is_array()) {
    auto list = *c.int_list({"num_key_value_heads"});
    if (static_cast<std::int64_t>(list.size()) != layers)
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: 'num_key_value_heads' lists {} layers, the model has {}",
                              c.where(), list.size(), layers));
    return list;
  }
  std::int64_t kv = heads;
  if (c.has("num_key_value_heads")) kv = c.dim({"num_key_value_heads"});
  else if (c.flag_or({"multi_query"}, false)) kv = 1;
  else kv = c.dim_or({"n_head_kv", "num_kv_heads"}, heads);
  return std::vector<std::int64_t>(static_cast<std::size_t>(layers), kv);
}

// The first layer's key/value heads, as the activation formulas take them (a per-layer list:
// its first entry, at least 1).
std::int64_t first_kv_heads(const Config& c, std::int64_t heads) {
  if (c.flag_or({"new_decoder_architecture"}, false)) return c.dim_or({"num_kv_heads"}, heads);
  if (auto it = c.json().find("num_key_value_heads"); it != c.json().end() && it->is_array()) {
    const auto list = *c.int_list({"num_key_value_heads"});
    return list.empty() ? heads : std::max<std::int64_t>(list.front(), 1);
  }
  if (c.has("num_key_value_heads")) return c.dim({"num_key_value_heads"});
  if (c.flag_or({"multi_query"}, false)) return 1;
  return c.dim_or({"n_head_kv", "num_kv_heads"}, heads);
}

// A number when the key holds one; anything else is ignored (nothing sized depends on it).
double number_if(const Config& c, std::initializer_list<const char*> keys, double fallback) {
  for (const char* k : keys)
    if (auto it = c.json().find(k); it != c.json().end() && it->is_number()) return it->get<double>();
  return fallback;
}

}  // namespace

Config text_config(const Config& config) {
  if (!config.has_any({"num_hidden_layers", "n_layer", "num_layers", "decoder_layers"}))
    if (auto t = config.sub("text_config")) return *t;
  return config;
}

const Json* rope_parameters_of(const Config& c, std::string_view layer_type) {
  const auto it = c.json().find("rope_parameters");
  if (it == c.json().end() || !it->is_object()) return nullptr;
  const auto types = c.json().find("layer_types");
  const bool listed = types != c.json().end() && types->is_array();
  bool keyed_by_type = !it->empty();
  for (auto e = it->begin(); e != it->end() && keyed_by_type; ++e) {
    if (listed) {
      keyed_by_type = std::find(types->begin(), types->end(), Json(e.key())) != types->end();
    } else {
      const std::string_view k = e.key();
      const std::string_view suffix = "_attention";
      keyed_by_type = e->is_object() && k.size() > suffix.size() &&
                      k.compare(k.size() - suffix.size(), suffix.size(), suffix) == 0;
    }
  }
  if (!keyed_by_type) return &*it;
  const auto per = it->find(std::string(layer_type));
  return per != it->end() && per->is_object() ? &*per : nullptr;
}

namespace {
// The scaling object's numbers and LongRoPE's lists (RopeDims::params); entries of other types are
// left out, as read_rope leaves out what it cannot read.
void read_rope_params(const Json& p, RopeDims& r) {
  for (auto e = p.begin(); e != p.end(); ++e) {
    if (e->is_number()) r.params.emplace_back(e.key(), e->get<double>());
    else if (e->is_boolean()) r.params.emplace_back(e.key(), e->get<bool>() ? 1.0 : 0.0);
    if (!e->is_array() || (e.key() != "short_factor" && e.key() != "long_factor")) continue;
    std::vector<double>& out = e.key() == "short_factor" ? r.short_factor : r.long_factor;
    for (const Json& x : *e)
      if (x.is_number()) out.push_back(x.get<double>());
  }
}
}  // namespace

RopeDims read_rope(const Config& c, double theta_default, std::int64_t rotary_dims,
                   std::string_view layer_type) {
  RopeDims r;
  r.theta = number_if(c, {"rope_theta"}, theta_default);
  r.rotary_dims = rotary_dims;
  const Json* p = nullptr;
  if (auto it = c.json().find("rope_scaling"); it != c.json().end() && it->is_object()) {
    p = &*it;
    r.scaled = true;  // a legacy rope_scaling with no type still scales (linear, as 4.x did)
  } else {
    p = rope_parameters_of(c, layer_type);
  }
  if (!p) return r;
  if (auto t = p->find("rope_theta"); t != p->end() && t->is_number()) r.theta = t->get<double>();
  for (const char* k : {"rope_type", "type"})
    if (auto t = p->find(k); t != p->end() && t->is_string()) {
      r.scaling_type = t->get<std::string>();
      break;
    }
  if (auto f = p->find("factor"); f != p->end() && f->is_number()) r.factor = f->get<double>();
  if (r.scaling_type == "default" || r.scaling_type == "mrope") {
    r.scaled = false;
    r.scaling_type.clear();
    r.factor = 1;
  } else if (!r.scaling_type.empty()) {
    r.scaled = true;
  }
  if (r.scaled) read_rope_params(*p, r);
  return r;
}

double read_norm_eps(const Config& c, std::initializer_list<const char*> keys, double fallback) {
  return number_if(c, keys, fallback);
}

void set_uniform_layers(ModelDims& d, const RopeDims& rope) {
  LayerDims layer;
  layer.heads = d.heads;
  layer.kv_heads = d.kv_heads;
  layer.k_head_dim = layer.v_head_dim = d.head_dim;
  layer.rope = rope;
  layer.intermediate = d.intermediate;
  d.per_layer.assign(static_cast<std::size_t>(d.layers), layer);
}

void apply_window_rules(ModelDims& d, const Config& c) {
  deferring(d, [&] { mark_windows(c, d); });
}

void set_moe(ModelDims& d, const MoeDims& moe, bool moe_width_given, const std::vector<bool>& moe_layers) {
  if (moe.experts <= 0 || moe.active <= 0) {
    d.experts = d.experts_per_token = 0;
    return;
  }
  d.experts = moe.experts;
  d.experts_per_token = moe.active;
  d.intermediate = std::max(moe_width_given ? d.intermediate : 0, moe.token_width());
  for (std::size_t i = 0; i < d.per_layer.size(); ++i) {
    if (!moe_layers.empty() && !(i < moe_layers.size() && moe_layers[i])) continue;
    d.per_layer[i].moe = moe;
    d.per_layer[i].intermediate = moe.token_width();
  }
}

ModelDims read_model_dims(const Config& top) {
  const Config c = text_config(top);
  ModelDims d;
  d.encoder_decoder = c.flag_or({"is_encoder_decoder"}, false) ||
                      c.has_any({"decoder_layers", "num_decoder_layers"});
  d.hidden = c.dim({"hidden_size", "n_embd", "d_model", "dim"});
  if (d.encoder_decoder) {
    d.encoder_layers = c.dim_or({"encoder_layers", "num_layers", "num_hidden_layers"}, 0);
    d.layers = c.dim({"decoder_layers", "num_decoder_layers", "num_layers", "num_hidden_layers"});
    d.heads = c.dim({"decoder_attention_heads", "num_heads", "num_attention_heads"});
  } else {
    d.layers = c.dim({"num_hidden_layers", "n_layer", "num_layers", "n_layers"});
    d.heads = c.dim({"num_attention_heads", "n_head", "num_heads", "n_heads"});
  }
  d.head_dim = c.dim_or({"head_dim", "d_kv"}, 0);
  if (d.head_dim == 0) {
    if (d.hidden % d.heads != 0)
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: hidden size {} is not a multiple of the {} attention heads, and "
                              "there is no 'head_dim'", c.where(), d.hidden, d.heads));
    d.head_dim = d.hidden / d.heads;
  }
  d.kv_heads = first_kv_heads(c, d.heads);

  // MLP width: the dense one, then the MoE one a token goes through (top-k experts + shared).
  std::int64_t dense = d.encoder_decoder ? c.dim_or({"decoder_ffn_dim", "d_ff", "intermediate_size"}, 0)
                                         : c.dim_or({"intermediate_size", "n_inner", "ffn_dim", "d_ff",
                                                     "ffn_hidden_size"}, 0);
  if (dense == 0) dense = 4 * d.hidden;  // GPT-2 / GPT-J / BLOOM: n_inner null → 4 × hidden
  d.intermediate = dense;
  MoeDims moe;
  moe.experts = c.count_or({"num_local_experts", "n_routed_experts", "num_experts"}, 0);
  moe.active = c.count_or({"num_experts_per_tok", "moe_top_k", "top_k"}, 0);
  if (moe.experts > 0 && moe.active > 0) {
    moe.expert_width = c.dim_or({"moe_intermediate_size"}, dense);
    if (c.has("shared_expert_intermediate_size")) {
      moe.shared = 1;
      moe.shared_width = c.dim({"shared_expert_intermediate_size"});
    } else {
      moe.shared = c.count_or({"n_shared_experts"}, 0);
      moe.shared_width = moe.shared * moe.expert_width;
    }
  }
  d.vocab = c.count_or({"vocab_size", "n_vocab"}, 0);
  d.max_positions = c.count_or({"max_position_embeddings", "n_positions", "max_sequence_length",
                                "max_seq_len", "seq_length", "max_target_positions"}, 0);
  d.tied_embeddings = c.flag_or({"tie_word_embeddings"}, true);
  d.norm_eps = number_if(c, {"rms_norm_eps", "layer_norm_epsilon", "layer_norm_eps", "norm_epsilon"}, 0);

  // Per layer: one shape, then per-layer key/value heads, MLA and the window rules.
  deferring(d, [&] {
    if (d.layers > 100'000)
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: {} decoder layers is not a real model", c.where(), d.layers));
    set_uniform_layers(d, read_rope(c, 0, d.head_dim));
    const auto kv = kv_heads_per_layer(c, d.layers, d.heads);
    for (std::size_t i = 0; i < kv.size(); ++i) {
      d.per_layer[i].kv_heads = kv[i];
      if (kv[i] == 0) d.per_layer[i].attention = AttentionKind::kNone;
    }
    if (c.has("kv_lora_rank")) {
      // MLA: transformers caches K = heads × (qk_nope + qk_rope), V = heads × v_head_dim; vLLM and
      // llama.cpp cache the latent kv_lora_rank + qk_rope_head_dim once per token and layer.
      MlaDims mla;
      mla.qk_rope_head_dim = c.dim({"qk_rope_head_dim"});
      mla.kv_lora_rank = c.dim({"kv_lora_rank"});
      mla.qk_nope_head_dim = c.dim({"qk_nope_head_dim"});
      mla.v_head_dim = c.dim({"v_head_dim"});
      mla.q_lora_rank = c.count_or({"q_lora_rank"}, 0);
      for (auto& l : d.per_layer) {
        l.attention = AttentionKind::kMla;
        l.mla = mla;
        l.k_head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
        l.v_head_dim = mla.v_head_dim;
      }
    }
  });
  set_moe(d, moe, c.has("moe_intermediate_size"));
  apply_window_rules(d, c);
  if (d.encoder_decoder) {
    d.cross.layers = d.layers;
    d.cross.kv_heads = d.heads;
    d.cross.head_dim = d.head_dim;
    d.cross.default_encoder_length = c.count_or({"max_source_positions"}, 0);
  }
  return d;
}

void finish_model_dims(ModelDims& d, const Config& top, const TensorTree& tree) {
  d.dropout = any_dropout(text_config(top));
  d.gated_mlp = false;
  // A gate beside the up projection: a module (gate_proj, w3, wi_0, a fused gate_up_proj,
  // Granite's input_linear of twice the width) or a fused expert parameter (gpt-oss's gate_up_proj).
  for (const auto& m : tree.modules) {
    const std::string leaf = leaf_name(m.name);
    if (leaf == "gate_proj" || leaf == "w3" || leaf == "wi_0" || leaf == "gate_up_proj" || leaf == "input_linear") {
      d.gated_mlp = true;
      break;
    }
  }
  for (std::size_t i = 0; !d.gated_mlp && i < tree.tensors.size(); ++i)
    d.gated_mlp = leaf_name(tree.tensors[i].name) == "gate_up_proj";
  // mamba_ssm_cache_dtype: the model's config asks for its SSM state in float32 (Nemotron-H), as
  // vLLM's option of that name does; memfit counts it so for every engine.
  if (text_config(top).string_or({"mamba_ssm_cache_dtype"}, "") == "float32")
    for (LayerDims& l : d.per_layer)
      if (l.state.ssm_state > 0) l.state.ssm_f32 = true;
  std::string arch0;
  if (auto a = top.string_list({"architectures"}); a && !a->empty()) arch0 = a->front();
  const std::string& cls = tree.class_name();
  d.generative = d.encoder_decoder || is_generation_class(cls) ||
                 (cls.size() >= 5 && cls.compare(cls.size() - 5, 5, "Model") == 0 &&
                  is_generation_class(arch0));
}

namespace {

struct ParameterSplit {
  double total = 0, experts = 0;
};

ParameterSplit split_parameters(const TensorTree& tree) {
  ParameterSplit s;
  const std::vector<std::uint64_t> copies = tree.multiplicities();  // compact trees
  for (int i : tree.named_parameters()) {
    const TensorInfo& t = tree.tensors[static_cast<std::size_t>(i)];
    const double numel = static_cast<double>(t.numel) * static_cast<double>(copies[static_cast<std::size_t>(t.module)]);
    s.total += numel;
    // Routed experts: per-expert modules under `.experts.`, or GraniteMoe's fused
    // [experts, out, in] weights (block_sparse_moe.input_linear / output_linear).
    if (t.name.find(".experts.") != std::string::npos ||
        t.name.find(".block_sparse_moe.input_linear.") != std::string::npos ||
        t.name.find(".block_sparse_moe.output_linear.") != std::string::npos)
      s.experts += numel;
  }
  return s;
}

}  // namespace

double routed_expert_parameters(const TensorTree& tree) { return split_parameters(tree).experts; }

double experts_touched(const ModelDims& dims, std::int64_t tokens) {
  if (dims.experts <= 0 || dims.experts_per_token <= 0) return 1;
  const double k = std::min(1.0, static_cast<double>(dims.experts_per_token) / static_cast<double>(dims.experts));
  return 1.0 - std::pow(1.0 - k, static_cast<double>(std::max<std::int64_t>(1, tokens)));
}

double active_parameters(const TensorTree& tree, const ModelDims& dims) {
  const auto [total, experts] = split_parameters(tree);
  if (dims.experts <= 0 || dims.experts_per_token <= 0) return total;
  const double used = std::min(1.0, static_cast<double>(dims.experts_per_token) /
                                        static_cast<double>(dims.experts));
  return total - experts * (1.0 - used);
}

}  // namespace memfit
