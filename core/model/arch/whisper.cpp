// Whisper (transformers models/whisper/modeling_whisper.py, 4.40): WhisperModel,
// WhisperForConditionalGeneration, WhisperForAudioClassification.
//
// The encoder's sinusoidal positions are an nn.Embedding whose weight is a parameter with
// requires_grad=False: it is still in named_parameters() and the checkpoint. WhisperAttention's
// k_proj has no bias. proj_out is tied to the decoder's embed_tokens (tie_word_embeddings,
// default True). No buffers.
// Modules without tensors follow v4.40.0's modeling_whisper.py (huggingface/transformers tag
// v4.40.0, 745bbfe4), the same today: each layer's activation_fn (every dropout is a float).
#include "common.h"
#include "families.h"
#include "family_dims.h"

namespace memfit::arch {
namespace {

struct WhisperDims {
  std::int64_t vocab, mels, d_model, source_positions, target_positions;
  std::int64_t enc_layers, enc_heads, enc_ffn;
  std::int64_t dec_layers, dec_heads, dec_ffn;
  bool tie;
  std::string act;  // activation_function: each layer's activation_fn
};

WhisperDims read_dims(const Config& c) {
  WhisperDims d{};
  d.vocab = c.dim_or({"vocab_size"}, 51865);
  d.mels = c.dim_or({"num_mel_bins"}, 80);
  d.d_model = c.dim_or({"d_model", "hidden_size"}, 384);
  d.source_positions = c.dim_or({"max_source_positions"}, 1500);
  d.target_positions = c.dim_or({"max_target_positions"}, 448);
  d.enc_layers = c.repeats_or({"encoder_layers", "num_hidden_layers"}, 4);
  d.enc_heads = c.dim_or({"encoder_attention_heads", "num_attention_heads"}, 6);
  d.enc_ffn = c.dim_or({"encoder_ffn_dim"}, 1536);
  d.dec_layers = c.repeats_or({"decoder_layers"}, 4);
  d.dec_heads = c.dim_or({"decoder_attention_heads"}, 6);
  d.dec_ffn = c.dim_or({"decoder_ffn_dim"}, 1536);
  d.tie = c.flag_or({"tie_word_embeddings"}, true);
  d.act = c.string_or({"activation_function"}, "gelu");
  // WhisperAttention raises when embed_dim is not divisible by num_heads.
  require_divisible(c, d.d_model, "d_model", d.enc_heads, "encoder_attention_heads");
  require_divisible(c, d.d_model, "d_model", d.dec_heads, "decoder_attention_heads");
  return d;
}

void attention(TreeBuilder& b, std::string_view name, std::int64_t dim) {
  auto s = b.module(name, "WhisperAttention");
  nn::linear(b, "k_proj", dim, dim, false);
  nn::linear(b, "v_proj", dim, dim);
  nn::linear(b, "q_proj", dim, dim);
  nn::linear(b, "out_proj", dim, dim);
}

void layer(TreeBuilder& b, const WhisperDims& d, bool decoder) {
  const std::int64_t ffn = decoder ? d.dec_ffn : d.enc_ffn;
  attention(b, "self_attn", d.d_model);
  // WhisperDecoderLayer assigns activation_fn before self_attn_layer_norm, the encoder's after.
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

void encoder(TreeBuilder& b, const WhisperDims& d) {
  auto s = b.module("encoder", "WhisperEncoder");
  nn::conv1d(b, "conv1", d.mels, d.d_model, 3);
  nn::conv1d(b, "conv2", d.d_model, d.d_model, 3);
  nn::embedding(b, "embed_positions", d.source_positions, d.d_model);
  {
    auto layers = b.module("layers", "ModuleList");
    for (std::int64_t i = 0; i < d.enc_layers; ++i) {
      auto l = b.item(i, "WhisperEncoderLayer");
      layer(b, d, false);
    }
  }
  nn::layer_norm(b, "layer_norm", d.d_model);
}

void decoder(TreeBuilder& b, const WhisperDims& d) {
  auto s = b.module("decoder", "WhisperDecoder");
  nn::embedding(b, "embed_tokens", d.vocab, d.d_model);
  nn::embedding(b, "embed_positions", d.target_positions, d.d_model,
                "WhisperPositionalEmbedding");
  {
    auto layers = b.module("layers", "ModuleList");
    for (std::int64_t i = 0; i < d.dec_layers; ++i) {
      auto l = b.item(i, "WhisperDecoderLayer");
      layer(b, d, true);
    }
  }
  nn::layer_norm(b, "layer_norm", d.d_model);
}

TensorTree tree(const BuildRequest& r, const WhisperDims& d) {
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({"WhisperEncoderLayer", "WhisperDecoderLayer"});
  if (is_class(r, "WhisperModel")) {
    encoder(b, d);
    decoder(b, d);
  } else if (is_class(r, "WhisperForConditionalGeneration")) {
    {
      auto m = b.module("model", "WhisperModel");
      encoder(b, d);
      decoder(b, d);
    }
    if (d.tie) nn::tied_linear(b, "proj_out", "model.decoder.embed_tokens.weight");
    else nn::linear(b, "proj_out", d.d_model, d.vocab, false);
  } else {
    // WhisperForAudioClassification: encoder only; layer_weights (a direct parameter, so first
    // in named_parameters) only with use_weighted_layer_sum, over encoder_layers + 1 outputs.
    if (r.config.flag_or({"use_weighted_layer_sum"}, false))
      b.param("layer_weights", {d.enc_layers + 1});
    encoder(b, d);
    const std::int64_t proj = r.config.dim_or({"classifier_proj_size"}, 256);
    nn::linear(b, "projector", d.d_model, proj);
    nn::linear(b, "classifier", proj, num_labels(r.config));
  }
  return b.finish();
}

// The model's dims from the same reads (family_dims.h): the decoder's layers and heads, and a
// cross-attention over max_source_positions encoder frames. WhisperConfig has no epsilon key
// (torch's LayerNorm default): norm_eps stays 0, unknown, as the generic reader gave it.
ModelDims model_dims(const Config& c, const WhisperDims& d) {
  return encoder_decoder_dims(c,
                              {d.d_model, d.vocab, d.dec_layers, d.dec_heads, d.dec_heads,
                               d.d_model / d.dec_heads, d.dec_ffn, d.target_positions, d.tie, 0.0},
                              d.enc_layers, d.source_positions);
}

TensorTree build(const BuildRequest& r) {
  return build_with_dims(r, read_dims(r.config), tree, model_dims);
}

}  // namespace

const Family& whisper_family() {
  static const Family f{
      "transformers",
      {"whisper"},
      {{"WhisperModel", "AutoModel"},
       {"WhisperForConditionalGeneration", "AutoModelForSpeechSeq2Seq"},
       {"WhisperForAudioClassification", "AutoModelForAudioClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
