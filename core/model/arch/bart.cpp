// BART (transformers models/bart/modeling_bart.py, 4.40): BartModel,
// BartForConditionalGeneration, BartForSequenceClassification.
//
// BartEncoder/BartDecoder build their own BartScaledWordEmbedding and then set
// `self.embed_tokens.weight = embed_tokens.weight`, so encoder/decoder embed_tokens.weight are
// aliases of shared.weight whatever tie_word_embeddings says. Learned positions have 2 extra rows
// (BartLearnedPositionalEmbedding's offset). BartForConditionalGeneration registers the
// persistent buffer final_logits_bias [1, vocab].
// Modules without tensors follow v4.40.0's modeling_bart.py (huggingface/transformers tag
// v4.40.0, 745bbfe4), the same today: each layer's activation_fn (the layers' and coders'
// dropouts are floats) and BartClassificationHead's dropout.
#include "common.h"
#include "families.h"
#include "family_dims.h"

namespace memfit::arch {
namespace {

struct BartDims {
  std::int64_t vocab, d_model, positions;
  std::int64_t enc_layers, enc_ffn, enc_heads;
  std::int64_t dec_layers, dec_ffn, dec_heads;
  bool tie;
  std::string act;  // activation_function: each layer's activation_fn
};

BartDims read_dims(const Config& c) {
  BartDims d{};
  d.vocab = c.dim_or({"vocab_size"}, 50265);
  d.d_model = c.dim_or({"d_model"}, 1024);
  d.positions = c.dim_or({"max_position_embeddings"}, 1024);
  d.enc_layers = c.repeats_or({"encoder_layers"}, 12);
  d.enc_ffn = c.dim_or({"encoder_ffn_dim"}, 4096);
  d.enc_heads = c.dim_or({"encoder_attention_heads"}, 16);
  d.dec_layers = c.repeats_or({"decoder_layers"}, 12);
  d.dec_ffn = c.dim_or({"decoder_ffn_dim"}, 4096);
  d.dec_heads = c.dim_or({"decoder_attention_heads"}, 16);
  d.tie = c.flag_or({"tie_word_embeddings"}, true);
  d.act = c.string_or({"activation_function"}, "gelu");
  // BartAttention raises when embed_dim is not divisible by num_heads.
  require_divisible(c, d.d_model, "d_model", d.enc_heads, "encoder_attention_heads");
  require_divisible(c, d.d_model, "d_model", d.dec_heads, "decoder_attention_heads");
  return d;
}

// BartConfig passes num_labels=3 to PretrainedConfig, where a non-empty id2label wins.
std::int64_t bart_num_labels(const Config& c) {
  auto it = c.json().find("id2label");
  if (it != c.json().end() && it->is_object() && !it->empty())
    return static_cast<std::int64_t>(it->size());
  return c.dim_or({"num_labels"}, 3);
}

void attention(TreeBuilder& b, std::string_view name, std::int64_t dim) {
  auto s = b.module(name, "BartAttention");
  nn::linear(b, "k_proj", dim, dim);
  nn::linear(b, "v_proj", dim, dim);
  nn::linear(b, "q_proj", dim, dim);
  nn::linear(b, "out_proj", dim, dim);
}

void coder(TreeBuilder& b, std::string_view name, const BartDims& d, bool decoder,
           const std::string& shared_weight) {
  auto s = b.module(name, decoder ? "BartDecoder" : "BartEncoder");
  {
    auto e = b.module("embed_tokens", "BartScaledWordEmbedding");
    b.tied_param("weight", shared_weight);
  }
  nn::embedding(b, "embed_positions", d.positions + 2, d.d_model,
                "BartLearnedPositionalEmbedding");
  {
    auto layers = b.module("layers", "ModuleList");
    const std::int64_t n = decoder ? d.dec_layers : d.enc_layers;
    const std::int64_t ffn = decoder ? d.dec_ffn : d.enc_ffn;
    for (std::int64_t i = 0; i < n; ++i) {
      auto layer = b.item(i, decoder ? "BartDecoderLayer" : "BartEncoderLayer");
      attention(b, "self_attn", d.d_model);
      // BartDecoderLayer assigns activation_fn before self_attn_layer_norm, the encoder's after.
      if (decoder) nn::activation(b, "activation_fn", d.act);
      nn::layer_norm(b, "self_attn_layer_norm", d.d_model);
      if (decoder) {
        attention(b, "encoder_attn", d.d_model);
        nn::layer_norm(b, "encoder_attn_layer_norm", d.d_model);
      } else {
        nn::activation(b, "activation_fn", d.act);
      }
      nn::linear(b, "fc1", d.d_model, ffn);
      nn::linear(b, "fc2", ffn, d.d_model);
      nn::layer_norm(b, "final_layer_norm", d.d_model);
    }
  }
  nn::layer_norm(b, "layernorm_embedding", d.d_model);
}

// BartModel's tensors inside the current module (the root, or `model` of a head class).
void model(TreeBuilder& b, const BartDims& d) {
  const std::string shared_weight = b.path("shared") + ".weight";
  nn::embedding(b, "shared", d.vocab, d.d_model, "BartScaledWordEmbedding");
  coder(b, "encoder", d, false, shared_weight);
  coder(b, "decoder", d, true, shared_weight);
}

TensorTree tree(const BuildRequest& r, const BartDims& d) {
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({"BartEncoderLayer", "BartDecoderLayer"});
  if (is_class(r, "BartModel")) {
    model(b, d);
    return b.finish();
  }
  {
    auto m = b.module("model", "BartModel");
    model(b, d);
  }
  if (is_class(r, "BartForConditionalGeneration")) {
    b.buffer("final_logits_bias", {1, d.vocab}, DType::kF32, true);
    if (d.tie) nn::tied_linear(b, "lm_head", "model.shared.weight");
    else nn::linear(b, "lm_head", d.d_model, d.vocab, false);
  } else {
    auto head = b.module("classification_head", "BartClassificationHead");
    nn::linear(b, "dense", d.d_model, d.d_model);
    nn::dropout(b, "dropout");
    nn::linear(b, "out_proj", d.d_model, bart_num_labels(r.config));
  }
  return b.finish();
}

// The model's dims from the same reads (family_dims.h): the decoder's layers and heads, the
// encoder-decoder's cross-attention. BartConfig has no epsilon key (torch's LayerNorm default):
// norm_eps stays 0, unknown, as the generic reader gave it.
ModelDims model_dims(const Config& c, const BartDims& d) {
  return encoder_decoder_dims(c,
                              {d.d_model, d.vocab, d.dec_layers, d.dec_heads, d.dec_heads,
                               d.d_model / d.dec_heads, d.dec_ffn, d.positions, d.tie, 0.0},
                              d.enc_layers, 0);
}

TensorTree build(const BuildRequest& r) {
  return build_with_dims(r, read_dims(r.config), tree, model_dims);
}

}  // namespace

const Family& bart_family() {
  static const Family f{
      "transformers",
      {"bart"},
      {{"BartModel", "AutoModel"},
       {"BartForConditionalGeneration", "AutoModelForSeq2SeqLM"},
       {"BartForSequenceClassification", "AutoModelForSequenceClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
