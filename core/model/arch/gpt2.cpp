// GPT-2 (transformers models/gpt2/modeling_gpt2.py, 4.40): GPT2Model, GPT2LMHeadModel.
// Modules without tensors are registered as in 4.40 (and today): drop after wpe, attn_dropout
// and resid_dropout after c_proj, the MLP's act and dropout after its c_proj.
#include "common.h"
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

// The decoder's shared dims (n_inner in `inter`), plus GPT-2's cross-attention flag.
struct Gpt2Dims : DecoderDims {
  bool cross_attention = false;
};

Gpt2Dims read_dims(const Config& c) {
  Gpt2Dims d;
  d.vocab = c.dim_or({"vocab_size"}, 50257);
  d.positions = c.dim_or({"n_positions", "max_position_embeddings"}, 1024);
  d.hidden = c.dim_or({"n_embd", "hidden_size"}, 768);
  d.layers = c.repeats_or({"n_layer", "num_hidden_layers"}, 12);
  d.heads = c.dim_or({"n_head", "num_attention_heads"}, 12);
  d.inter = c.dim_or({"n_inner"}, 4 * d.hidden);
  d.cross_attention = c.flag_or({"add_cross_attention"}, false);
  d.tie = c.flag_or({"tie_word_embeddings"}, true);
  d.act = c.string_or({"activation_function"}, "gelu_new");
  d.norm_eps = read_norm_eps(c, {"layer_norm_epsilon"}, 1e-5);
  require_divisible(c, d.hidden, "n_embd", d.heads, "n_head");
  d.kv_heads = d.heads;
  d.head_dim = d.hidden / d.heads;
  return d;
}

void attention(TreeBuilder& b, std::string_view name, const Gpt2Dims& d, bool cross) {
  auto s = b.module(name, "GPT2Attention");
  // 4.40 registers a bool causal mask and a scalar per layer; current transformers does not.
  b.buffer("bias", {1, 1, d.positions, d.positions}, DType::kBool, false, BufferEra::kLegacyOnly);
  b.buffer("masked_bias", {}, DType::kF32, false, BufferEra::kLegacyOnly);
  if (cross) {
    nn::conv1d_gpt(b, "c_attn", d.hidden, 2 * d.hidden);
    nn::conv1d_gpt(b, "q_attn", d.hidden, d.hidden);
  } else {
    nn::conv1d_gpt(b, "c_attn", d.hidden, 3 * d.hidden);
  }
  nn::conv1d_gpt(b, "c_proj", d.hidden, d.hidden);
  nn::dropout(b, "attn_dropout");
  nn::dropout(b, "resid_dropout");
}

void model(TreeBuilder& b, const Gpt2Dims& d) {
  nn::embedding(b, "wte", d.vocab, d.hidden);
  nn::embedding(b, "wpe", d.positions, d.hidden);
  nn::dropout(b, "drop");
  {
    auto h = b.module("h", "ModuleList");
    for (std::int64_t i = 0; i < d.layers; ++i) {
      auto block = b.item(i, "GPT2Block");
      nn::layer_norm(b, "ln_1", d.hidden);
      attention(b, "attn", d, false);
      nn::layer_norm(b, "ln_2", d.hidden);
      if (d.cross_attention) {
        attention(b, "crossattention", d, true);
        nn::layer_norm(b, "ln_cross_attn", d.hidden);
      }
      auto mlp = b.module("mlp", "GPT2MLP");
      nn::conv1d_gpt(b, "c_fc", d.hidden, d.inter);
      nn::conv1d_gpt(b, "c_proj", d.inter, d.hidden);
      nn::activation(b, "act", d.act);
      nn::dropout(b, "dropout");
    }
  }
  nn::layer_norm(b, "ln_f", d.hidden);
}

TensorTree tree(const BuildRequest& r, const Gpt2Dims& d) {
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({"GPT2Block"});
  if (is_class(r, "GPT2Model")) {
    model(b, d);
  } else {
    {
      auto t = b.module("transformer", "GPT2Model");
      model(b, d);
    }
    if (is_class(r, "GPT2LMHeadModel")) {
      if (d.tie) nn::tied_linear(b, "lm_head", "transformer.wte.weight");
      else nn::linear(b, "lm_head", d.hidden, d.vocab, false);
    } else if (is_class(r, "GPT2ForSequenceClassification")) {
      nn::linear(b, "score", d.hidden, num_labels(r.config), false);
    } else if (is_class(r, "GPT2ForTokenClassification")) {
      nn::linear(b, "classifier", d.hidden, num_labels(r.config), true);
    }
  }
  return b.finish();
}

TensorTree build(const BuildRequest& r) {
  const Gpt2Dims d = read_dims(r.config);
  TensorTree t = tree(r, d);
  // Every layer attends fully; positions are learned (no RoPE).
  if (r.dims) *r.dims = decoder_model_dims(r.config, d, RopeDims{});
  return t;
}

}  // namespace

const Family& gpt2_family() {
  static const Family f{"transformers",
                        {"gpt2"},
                        {{"GPT2Model", "AutoModel"},
                         {"GPT2LMHeadModel", "AutoModelForCausalLM"},
                         {"GPT2ForSequenceClassification", "AutoModelForSequenceClassification"},
                         {"GPT2ForTokenClassification", "AutoModelForTokenClassification"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
