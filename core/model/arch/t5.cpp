// T5 (transformers models/t5/modeling_t5.py, 4.40): T5Model, T5ForConditionalGeneration,
// T5EncoderModel; and mT5 (models/mt5/modeling_mt5.py), T5's modules copied under MT5* class
// names ("Copied from transformers.models.t5…" with T5->MT5) with MT5Config's own defaults.
//
// The encoder and decoder T5Stack receive `self.shared` itself as embed_tokens (the same module
// object), so their embed_tokens.weight is an alias of shared.weight. Only block 0 of each stack
// owns a relative_attention_bias. No buffers anywhere.
// Modules without tensors follow v4.40.0's modeling_t5.py (huggingface/transformers tag v4.40.0,
// 745bbfe4), the same today: the dense layers' dropout and act, each T5Layer*'s dropout, each
// T5Stack's dropout (T5Attention's dropout is a float).
// T5PreTrainedModel: `_keep_in_fp32_modules = ["wo"]` — each feed-forward's output projection
// stays float32 in a float16 load (and a bitsandbytes quantizer leaves it unconverted).
#include <fmt/format.h>

#include "common.h"
#include "families.h"
#include "family_dims.h"
#include "memfit/model/keep_fp32.h"

namespace memfit::arch {
namespace {

// What differs between T5 and mT5: the class names' prefix and the configuration class defaults.
struct Flavor {
  std::string_view prefix;  // "T5" or "MT5"
  std::int64_t vocab, d_model, d_ff, heads, layers;
  const char* feed_forward_proj;
  bool tie;
};

// T5Config(): vocab_size=32128, d_model=512, d_ff=2048, num_heads=8, num_layers=6,
// feed_forward_proj="relu", tie_word_embeddings=True.
constexpr Flavor kT5{"T5", 32128, 512, 2048, 8, 6, "relu", true};
// MT5Config(): vocab_size=250112, d_model=512, d_ff=1024, num_heads=6, num_layers=8,
// feed_forward_proj="gated-gelu", tie_word_embeddings=False.
constexpr Flavor kMT5{"MT5", 250112, 512, 1024, 6, 8, "gated-gelu", false};

std::string cls(const Flavor& f, std::string_view suffix) { return fmt::format("{}{}", f.prefix, suffix); }

struct T5Dims {
  Flavor flavor;
  std::int64_t vocab, d_model, d_kv, d_ff, heads, enc_layers, dec_layers, buckets;
  bool gated;
  bool tie;
  std::string act;  // T5Config.dense_act_fn: T5Dense*ActDense.act
};

// configuration_t5.py: act_info = feed_forward_proj.split("-"); "gated-<act>" is gated, a bare
// "<act>" is not, anything else is a ValueError.
bool parse_gated(const Config& c, const char* fallback, std::string* act) {
  const std::string proj = c.string_or({"feed_forward_proj"}, fallback);
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dash = proj.find('-', start);
    parts.push_back(proj.substr(start, dash == std::string::npos ? std::string::npos
                                                                   : dash - start));
    if (dash == std::string::npos) break;
    start = dash + 1;
  }
  const bool gated = parts.front() == "gated";
  if ((parts.size() > 1 && !gated) || parts.size() > 2)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: 'feed_forward_proj' is '{}': expected '<act>' or 'gated-<act>'",
                            c.where(), proj));
  // dense_act_fn = act_info[-1], "gelu_new" for a bare "gated-gelu" (backwards compatibility); a
  // saved config's own dense_act_fn reaches PretrainedConfig.__init__ as a kwarg, set last.
  *act = c.string_or({"dense_act_fn"}, proj == "gated-gelu" ? "gelu_new" : parts.back());
  return gated;
}

T5Dims read_dims(const Config& c, const Flavor& f) {
  T5Dims d{};
  d.flavor = f;
  d.vocab = c.dim_or({"vocab_size"}, f.vocab);
  d.d_model = c.dim_or({"d_model"}, f.d_model);
  d.d_kv = c.dim_or({"d_kv"}, 64);
  d.d_ff = c.dim_or({"d_ff"}, f.d_ff);
  d.heads = c.dim_or({"num_heads"}, f.heads);
  d.enc_layers = c.repeats_or({"num_layers"}, f.layers);
  d.dec_layers = c.repeats_or({"num_decoder_layers"}, d.enc_layers);
  d.buckets = c.dim_or({"relative_attention_num_buckets"}, 32);
  d.gated = parse_gated(c, f.feed_forward_proj, &d.act);
  d.tie = c.flag_or({"tie_word_embeddings"}, f.tie);
  return d;
}

void attention(TreeBuilder& b, std::string_view name, const T5Dims& d, bool relative_bias) {
  auto s = b.module(name, cls(d.flavor, "Attention"));
  const std::int64_t inner = d.heads * d.d_kv;
  nn::linear(b, "q", d.d_model, inner, false);
  nn::linear(b, "k", d.d_model, inner, false);
  nn::linear(b, "v", d.d_model, inner, false);
  nn::linear(b, "o", inner, d.d_model, false);
  if (relative_bias) nn::embedding(b, "relative_attention_bias", d.buckets, d.heads);
}

void block(TreeBuilder& b, const T5Dims& d, bool decoder, bool first) {
  auto layers = b.module("layer", "ModuleList");
  int i = 0;
  {
    auto l = b.item(i++, cls(d.flavor, "LayerSelfAttention"));
    attention(b, "SelfAttention", d, first);
    nn::rms_norm(b, "layer_norm", d.d_model, cls(d.flavor, "LayerNorm"));
    nn::dropout(b, "dropout");
  }
  if (decoder) {
    auto l = b.item(i++, cls(d.flavor, "LayerCrossAttention"));
    attention(b, "EncDecAttention", d, false);
    nn::rms_norm(b, "layer_norm", d.d_model, cls(d.flavor, "LayerNorm"));
    nn::dropout(b, "dropout");
  }
  auto l = b.item(i, cls(d.flavor, "LayerFF"));
  {
    auto ff = b.module("DenseReluDense", cls(d.flavor, d.gated ? "DenseGatedActDense" : "DenseActDense"));
    if (d.gated) {
      nn::linear(b, "wi_0", d.d_model, d.d_ff, false);
      nn::linear(b, "wi_1", d.d_model, d.d_ff, false);
    } else {
      nn::linear(b, "wi", d.d_model, d.d_ff, false);
    }
    nn::linear(b, "wo", d.d_ff, d.d_model, false);
    nn::dropout(b, "dropout");
    nn::activation(b, "act", d.act);
  }
  nn::rms_norm(b, "layer_norm", d.d_model, cls(d.flavor, "LayerNorm"));
  nn::dropout(b, "dropout");
}

// A T5Stack whose embed_tokens is the model's `shared` module (`shared_weight` is its full name).
void stack(TreeBuilder& b, std::string_view name, const T5Dims& d, bool decoder,
           const std::string& shared_weight) {
  auto s = b.module(name, cls(d.flavor, "Stack"));
  {
    auto e = b.module("embed_tokens", "Embedding");
    b.tied_param("weight", shared_weight);
  }
  {
    auto blocks = b.module("block", "ModuleList");
    const std::int64_t n = decoder ? d.dec_layers : d.enc_layers;
    for (std::int64_t i = 0; i < n; ++i) {
      auto blk = b.item(i, cls(d.flavor, "Block"));
      block(b, d, decoder, i == 0);
    }
  }
  nn::rms_norm(b, "final_layer_norm", d.d_model, cls(d.flavor, "LayerNorm"));
  nn::dropout(b, "dropout");
}

TensorTree tree(const BuildRequest& r, const T5Dims& d) {
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({cls(d.flavor, "Block")});
  nn::embedding(b, "shared", d.vocab, d.d_model);
  stack(b, "encoder", d, false, "shared.weight");
  if (is_class(r, cls(d.flavor, "EncoderModel"))) return b.finish();
  stack(b, "decoder", d, true, "shared.weight");
  if (is_class(r, cls(d.flavor, "ForConditionalGeneration"))) {
    // PreTrainedModel.tie_weights ties lm_head to shared only when tie_word_embeddings (the
    // PretrainedConfig default, True; T5 v1.1 / flan-t5 configs set it False).
    if (d.tie) nn::tied_linear(b, "lm_head", "shared.weight");
    else nn::linear(b, "lm_head", d.d_model, d.vocab, false);
  }
  return b.finish();
}

// The model's dims from the same reads (family_dims.h): the decoder's layers, d_kv per head, the
// encoder-decoder's cross-attention. T5 positions are relative: max_positions is the n_positions
// T5 checkpoints' configs carry, else 0. T5Config (configuration_t5.py, 4.40):
// layer_norm_epsilon=1e-6.
ModelDims model_dims(const Config& c, const T5Dims& d) {
  return encoder_decoder_dims(c,
                              {d.d_model, d.vocab, d.dec_layers, d.heads, d.heads, d.d_kv, d.d_ff,
                               c.count_or({"n_positions"}, 0), d.tie,
                               read_norm_eps(c, {"layer_norm_epsilon"}, 1e-6)},
                              d.enc_layers, 0);
}

// <Prefix>PreTrainedModel._keep_in_fp32_modules = ["wo"] in both.
TensorTree build_flavor(const BuildRequest& r, const Flavor& f) {
  TensorTree t = build_with_dims(r, read_dims(r.config, f), tree, model_dims);
  keep_in_fp32(t, {"wo"}, KeepFp32::kFloat16Loads);
  return t;
}

TensorTree build_t5(const BuildRequest& r) { return build_flavor(r, kT5); }
TensorTree build_mt5(const BuildRequest& r) { return build_flavor(r, kMT5); }

}  // namespace

const Family& t5_family() {
  static const Family f{"transformers",
                        {"t5"},
                        {{"T5Model", "AutoModel"},
                         {"T5ForConditionalGeneration", "AutoModelForSeq2SeqLM"},
                         {"T5EncoderModel", "AutoModelForTextEncoding"}},
                        &build_t5};
  return f;
}

const Family& mt5_family() {
  static const Family f{"transformers",
                        {"mt5"},
                        {{"MT5Model", "AutoModel"},
                         {"MT5ForConditionalGeneration", "AutoModelForSeq2SeqLM"},
                         {"MT5EncoderModel", "AutoModelForTextEncoding"}},
                        &build_mt5};
  return f;
}

}  // namespace memfit::arch
