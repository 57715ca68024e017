// GPT-Neo (transformers models/gpt_neo/modeling_gpt_neo.py, 4.40): GPTNeoModel and its heads.
// GPT-2's layout with nn.Linear projections (q/k/v without bias, out_proj with) under
// attn.attention, and each layer's attention "global" or "local" from attention_types
// ([[["global", "local"], 12]] expands to 24 alternating layers). Each GPTNeoSelfAttention
// registers a bool causal mask of max_positions² (a local layer's masks all but the last
// window_size tokens) and the scalar masked_bias, both persistent=False, in 4.40 and still today.
// The KV cache holds every token in every layer: a local layer masks, it does not drop, past keys.
// GPTNeoPreTrainedModel._no_split_modules = ["GPTNeoBlock"].
#include <fmt/format.h>

#include "common.h"
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

// attention_types: [[[kinds...], repeats], ...] → one kind per layer (expand_attention_types_params).
std::vector<std::string> attention_layers(const Config& c) {
  if (!c.has("attention_types")) {
    std::vector<std::string> out;
    for (int i = 0; i < 12; ++i) out.insert(out.end(), {"global", "local"});
    return out;
  }
  auto bad = [&]() -> Error {
    return Error(ErrorCode::kWrongType, fmt::format("{}: 'attention_types' must be a list of [[kinds], repeats] "
                                                    "pairs, e.g. [[[\"global\", \"local\"], 12]]", c.where()));
  };
  const Json& types = c.json().at("attention_types");
  if (!types.is_array()) throw bad();
  std::vector<std::string> out;
  for (const Json& item : types) {
    if (!item.is_array() || item.size() != 2 || !item[0].is_array() || !item[1].is_number_integer()) throw bad();
    const std::int64_t repeats = item[1].get<std::int64_t>();
    if (repeats < 0 || repeats > 100000) throw bad();
    for (std::int64_t r = 0; r < repeats; ++r)
      for (const Json& kind : item[0]) {
        if (!kind.is_string()) throw bad();
        const std::string k = kind.get<std::string>();
        if (k != "global" && k != "local")
          throw Error(ErrorCode::kInvalidValue, fmt::format("{}: 'attention_types' names '{}': only 'global' and "
                                                            "'local' layers exist", c.where(), k));
        out.push_back(k);
        if (out.size() > 100000) throw bad();
      }
  }
  return out;
}

DecoderDims read(const Config& c) {
  // GPTNeoConfig(): vocab_size=50257, max_position_embeddings=2048, hidden_size=2048, num_layers=24,
  // num_heads=16, intermediate_size=None (4 × hidden), activation_function="gelu_new",
  // layer_norm_epsilon=1e-5.
  DecoderDims d;
  d.vocab = c.dim_or({"vocab_size"}, 50257);
  d.positions = c.dim_or({"max_position_embeddings"}, 2048);
  d.hidden = c.dim_or({"hidden_size"}, 2048);
  d.layers = c.repeats_or({"num_layers", "num_hidden_layers"}, 24);
  d.heads = c.dim_or({"num_heads", "num_attention_heads"}, 16);
  d.inter = c.dim_or({"intermediate_size"}, 4 * d.hidden);
  require_divisible(c, d.hidden, "hidden_size", d.heads, "num_heads");
  d.kv_heads = d.heads;
  d.head_dim = d.hidden / d.heads;
  d.tie = c.flag_or({"tie_word_embeddings"}, true);
  d.act = c.string_or({"activation_function"}, "gelu_new");
  d.norm_eps = read_norm_eps(c, {"layer_norm_epsilon"}, 1e-5);
  // GPTNeoConfig raises unless attention_types expands to exactly num_layers kinds.
  const std::size_t kinds = attention_layers(c).size();
  if (kinds != static_cast<std::size_t>(d.layers))
    throw Error(ErrorCode::kInvalidValue, fmt::format("{}: 'attention_types' gives {} layers, 'num_layers' is {}",
                                                      c.where(), kinds, d.layers));
  return d;
}

void model(TreeBuilder& b, const DecoderDims& d) {
  nn::embedding(b, "wte", d.vocab, d.hidden);
  nn::embedding(b, "wpe", d.positions, d.hidden);
  nn::dropout(b, "drop");
  {
    auto h = b.module("h", "ModuleList");
    for (std::int64_t i = 0; i < d.layers; ++i) {
      auto block = b.item(i, "GPTNeoBlock");
      nn::layer_norm(b, "ln_1", d.hidden);
      {
        auto a = b.module("attn", "GPTNeoAttention");
        auto s = b.module("attention", "GPTNeoSelfAttention");
        b.buffer("bias", {1, 1, d.positions, d.positions}, DType::kBool, false);
        b.buffer("masked_bias", {}, DType::kF32, false);
        nn::dropout(b, "attn_dropout");
        nn::dropout(b, "resid_dropout");
        nn::linear(b, "k_proj", d.hidden, d.hidden, false);
        nn::linear(b, "v_proj", d.hidden, d.hidden, false);
        nn::linear(b, "q_proj", d.hidden, d.hidden, false);
        nn::linear(b, "out_proj", d.hidden, d.hidden, true);
      }
      nn::layer_norm(b, "ln_2", d.hidden);
      auto mlp = b.module("mlp", "GPTNeoMLP");
      nn::linear(b, "c_fc", d.hidden, d.inter);
      nn::linear(b, "c_proj", d.inter, d.hidden);
      nn::activation(b, "act", d.act);
      nn::dropout(b, "dropout");
    }
  }
  nn::layer_norm(b, "ln_f", d.hidden);
}

TensorTree tree(const BuildRequest& r, const DecoderDims& d) {
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({"GPTNeoBlock"});
  if (is_class(r, "GPTNeoModel")) {
    model(b, d);
    return b.finish();
  }
  {
    auto t = b.module("transformer", "GPTNeoModel");
    model(b, d);
  }
  if (is_class(r, "GPTNeoForCausalLM")) {
    if (d.tie) nn::tied_linear(b, "lm_head", "transformer.wte.weight");
    else nn::linear(b, "lm_head", d.hidden, d.vocab, false);
  } else if (is_class(r, "GPTNeoForSequenceClassification")) {
    nn::linear(b, "score", d.hidden, num_labels(r.config), false);
  } else if (is_class(r, "GPTNeoForTokenClassification")) {
    nn::dropout(b, "dropout");
    nn::linear(b, "classifier", d.hidden, num_labels(r.config));
  } else if (is_class(r, "GPTNeoForQuestionAnswering")) {
    nn::linear(b, "qa_outputs", d.hidden, num_labels(r.config));
  } else {
    throw Error(ErrorCode::kUnknownClass, fmt::format("class '{}' is not described for gpt_neo", r.class_name));
  }
  return b.finish();
}

TensorTree build(const BuildRequest& r) {
  const DecoderDims d = read(r.config);
  TensorTree t = tree(r, d);
  // Every layer caches every token (above); positions are learned (no RoPE).
  if (r.dims) *r.dims = uniform_decoder_dims(d, RopeDims{});
  return t;
}

}  // namespace

const Family& gpt_neo_family() {
  static const Family f{"transformers",
                        {"gpt_neo"},
                        {{"GPTNeoModel", "AutoModel"},
                         {"GPTNeoForCausalLM", "AutoModelForCausalLM"},
                         {"GPTNeoForSequenceClassification", "AutoModelForSequenceClassification"},
                         {"GPTNeoForTokenClassification", "AutoModelForTokenClassification"},
                         {"GPTNeoForQuestionAnswering", "AutoModelForQuestionAnswering"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
