// Llama (transformers models/llama/modeling_llama.py, 4.40): LlamaModel, LlamaForCausalLM,
// LlamaForSequenceClassification.
#include "common.h"
#include "families.h"

namespace memfit::arch {
namespace {

struct LlamaDims {
  std::int64_t vocab, hidden, inter, layers, heads, kv_heads, head_dim, positions;
  bool attention_bias, mlp_bias, tie;
};

LlamaDims read_dims(const Config& c) {
  LlamaDims d{};
  d.vocab = c.dim_or({"vocab_size"}, 32000);
  d.hidden = c.dim_or({"hidden_size"}, 4096);
  d.inter = c.dim_or({"intermediate_size"}, 11008);
  d.layers = c.count_or({"num_hidden_layers"}, 32);
  d.heads = c.dim_or({"num_attention_heads"}, 32);
  d.kv_heads = c.dim_or({"num_key_value_heads"}, d.heads);
  d.head_dim = head_dim(c, d.hidden, d.heads);
  d.positions = c.dim_or({"max_position_embeddings"}, 2048);
  d.attention_bias = c.flag_or({"attention_bias"}, false);
  d.mlp_bias = c.flag_or({"mlp_bias"}, false);
  d.tie = c.flag_or({"tie_word_embeddings"}, false);
  return d;
}

void decoder_layer(TreeBuilder& b, const LlamaDims& d) {
  {
    auto attn = b.module("self_attn", "LlamaAttention");
    nn::linear(b, "q_proj", d.hidden, d.heads * d.head_dim, d.attention_bias);
    nn::linear(b, "k_proj", d.hidden, d.kv_heads * d.head_dim, d.attention_bias);
    nn::linear(b, "v_proj", d.hidden, d.kv_heads * d.head_dim, d.attention_bias);
    nn::linear(b, "o_proj", d.heads * d.head_dim, d.hidden, d.attention_bias);
    legacy_rotary(b, "rotary_emb", "LlamaRotaryEmbedding", d.head_dim, d.positions);
  }
  {
    auto mlp = b.module("mlp", "LlamaMLP");
    nn::linear(b, "gate_proj", d.hidden, d.inter, d.mlp_bias);
    nn::linear(b, "up_proj", d.hidden, d.inter, d.mlp_bias);
    nn::linear(b, "down_proj", d.inter, d.hidden, d.mlp_bias);
  }
  nn::rms_norm(b, "input_layernorm", d.hidden, "LlamaRMSNorm");
  nn::rms_norm(b, "post_attention_layernorm", d.hidden, "LlamaRMSNorm");
}

void model(TreeBuilder& b, const LlamaDims& d) {
  nn::embedding(b, "embed_tokens", d.vocab, d.hidden);
  {
    auto layers = b.module("layers", "ModuleList");
    for (std::int64_t i = 0; i < d.layers; ++i) {
      auto layer = b.module(std::to_string(i), "LlamaDecoderLayer");
      decoder_layer(b, d);
    }
  }
  nn::rms_norm(b, "norm", d.hidden, "LlamaRMSNorm");
  current_rotary(b, "rotary_emb", "LlamaRotaryEmbedding", d.head_dim);
}

TensorTree build(const BuildRequest& r) {
  const LlamaDims d = read_dims(r.config);
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({"LlamaDecoderLayer"});
  if (is_class(r, "LlamaModel")) {
    model(b, d);
    return b.finish();
  }
  {
    auto m = b.module("model", "LlamaModel");
    model(b, d);
  }
  if (is_class(r, "LlamaForCausalLM")) {
    if (d.tie) nn::tied_linear(b, "lm_head", "model.embed_tokens.weight");
    else nn::linear(b, "lm_head", d.hidden, d.vocab, false);
  } else {
    nn::linear(b, "score", d.hidden, num_labels(r.config), false);
  }
  return b.finish();
}

}  // namespace

const Family& llama_family() {
  static const Family f{"transformers",
                        {"llama"},
                        {{"LlamaModel", "AutoModel"},
                         {"LlamaForCausalLM", "AutoModelForCausalLM"},
                         {"LlamaForSequenceClassification", "AutoModelForSequenceClassification"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
