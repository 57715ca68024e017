// SmolLM3 (transformers models/smollm3/modular_smollm3.py, first in 4.53; read on main):
// SmolLM3Model, SmolLM3ForCausalLM, SmolLM3ForSequenceClassification,
// SmolLM3ForTokenClassification.
//
// Llama's tensors (q/k/v/o with attention_bias, LlamaMLP with mlp_bias, one model-level
// rotary_emb). What differs is per layer and holds no tensor: no_rope_layers[i] == 0 marks a
// layer without RoPE (NoPE; default every 4th layer: no_rope_layer_interval 4), and
// layer_types / use_sliding_window choose sliding layers (the shared window rules).
#include <fmt/format.h>

#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

// 1: the layer uses RoPE. SmolLM3Config's default: (i + 1) % no_rope_layer_interval != 0.
std::vector<std::int64_t> rope_layers(const Config& c, std::int64_t layers) {
  if (auto list = c.int_list({"no_rope_layers"})) {
    if (static_cast<std::int64_t>(list->size()) != layers)
      throw Error(ErrorCode::kInvalidValue, fmt::format("{}: 'no_rope_layers' has {} entries for {} layers",
                                                        c.where(), list->size(), layers));
    return *list;
  }
  const std::int64_t interval = c.dim_or({"no_rope_layer_interval"}, 4);
  std::vector<std::int64_t> out(static_cast<std::size_t>(layers));
  for (std::int64_t i = 0; i < layers; ++i) out[static_cast<std::size_t>(i)] = (i + 1) % interval != 0;
  return out;
}

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // SmolLM3Config defaults.
  DecoderDims d = read_decoder_dims(c, {128256, 2048, 11008, 36, 16, 4, 32768, true});
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, false);
  const bool mlp_bias = c.flag_or({"mlp_bias"}, false);
  LlamaLikeSpec s;
  s.prefix = "SmolLM3";
  s.norm_class = "SmolLM3RMSNorm";
  s.rope = LegacyRope::kNone;
  TensorTree tree = build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    gated_mlp(b, "mlp", "SmolLM3MLP", d.hidden, d.inter, mlp_bias, d.act);
  });
  if (r.dims && *r.dims) {
    ModelDims& dims = **r.dims;
    // A bad no_rope_layers changes no tensor: like the window rules, its error waits for the
    // consumer of the per-layer attention.
    try {
      const std::vector<std::int64_t> rope = rope_layers(c, d.layers);
      for (std::size_t i = 0; i < dims.per_layer.size(); ++i)
        if (rope[i] == 0) dims.per_layer[i].rope = RopeDims{};
    } catch (const Error& e) {
      if (!dims.attention_error) dims.attention_error = e;
    }
  }
  return tree;
}

}  // namespace

const Family& smollm3_family() {
  static const Family f{
      "transformers",
      {"smollm3"},
      {{"SmolLM3Model", "AutoModel"},
       {"SmolLM3ForCausalLM", "AutoModelForCausalLM"},
       {"SmolLM3ForSequenceClassification", "AutoModelForSequenceClassification"},
       {"SmolLM3ForTokenClassification", "AutoModelForTokenClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
