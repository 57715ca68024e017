#include "bert_common.h"

#include <fmt/format.h>

#include "family_dims.h"

namespace memfit::arch::bert {
namespace {

std::string cls(std::string_view prefix, std::string_view suffix) {
  return fmt::format("{}{}", prefix, suffix);
}

// <Prefix>Attention: self (<Prefix>SelfAttention) then output (<Prefix>SelfOutput). The
// cross-attention is built with position_embedding_type="absolute", so never has the
// relative distance_embedding.
void attention(TreeBuilder& b, std::string_view name, const Dims& d, std::string_view prefix,
               bool relative) {
  auto a = b.module(name, cls(prefix, "Attention"));
  {
    auto s = b.module("self", cls(prefix, "SelfAttention"));
    const std::int64_t all_head = d.heads * d.head_size;
    nn::linear(b, "query", d.hidden, all_head);
    nn::linear(b, "key", d.hidden, all_head);
    nn::linear(b, "value", d.hidden, all_head);
    nn::dropout(b, "dropout");
    if (relative) nn::embedding(b, "distance_embedding", 2 * d.positions - 1, d.head_size);
  }
  {
    auto o = b.module("output", cls(prefix, "SelfOutput"));
    nn::linear(b, "dense", d.hidden, d.hidden);
    nn::layer_norm(b, "LayerNorm", d.hidden);
    nn::dropout(b, "dropout");
  }
}

void layer(TreeBuilder& b, const Dims& d, std::string_view prefix) {
  attention(b, "attention", d, prefix, d.relative);
  if (d.cross_attention) attention(b, "crossattention", d, prefix, false);
  {
    auto i = b.module("intermediate", cls(prefix, "Intermediate"));
    nn::linear(b, "dense", d.hidden, d.inter);
    nn::activation(b, "intermediate_act_fn", d.act);
  }
  auto o = b.module("output", cls(prefix, "Output"));
  nn::linear(b, "dense", d.inter, d.hidden);
  nn::layer_norm(b, "LayerNorm", d.hidden);
  nn::dropout(b, "dropout");
}

}  // namespace

Dims read_dims(const Config& c, const Defaults& def) {
  Dims d{};
  d.vocab = c.dim_or({"vocab_size"}, def.vocab);
  d.hidden = c.dim_or({"hidden_size"}, def.hidden);
  d.layers = c.repeats_or({"num_hidden_layers"}, 12);
  d.heads = c.dim_or({"num_attention_heads"}, def.heads);
  d.inter = c.dim_or({"intermediate_size"}, def.inter);
  d.positions = c.dim_or({"max_position_embeddings"}, def.positions);
  d.type_vocab = c.dim_or({"type_vocab_size"}, def.type_vocab);
  // BertSelfAttention raises unless the heads divide hidden_size, except when the config
  // carries an `embedding_size` attribute; the head size is int(hidden / heads) either way.
  if (!c.has("embedding_size"))
    require_divisible(c, d.hidden, "hidden_size", d.heads, "num_attention_heads");
  d.head_size = d.hidden / d.heads;
  if (d.head_size < 1)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: 'num_attention_heads' ({}) exceeds 'hidden_size' ({})",
                            c.where(), d.heads, d.hidden));
  const std::string pet = c.string_or({"position_embedding_type"}, "absolute");
  d.relative = pet == "relative_key" || pet == "relative_key_query";
  d.cross_attention = c.flag_or({"add_cross_attention"}, false);
  if (d.cross_attention && !c.flag_or({"is_decoder"}, false))
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: 'add_cross_attention' needs 'is_decoder': true (transformers "
                            "refuses to build the layer otherwise)",
                            c.where()));
  d.tie = c.flag_or({"tie_word_embeddings"}, true);
  d.act = c.string_or({"hidden_act"}, "gelu");
  return d;
}

ModelDims model_dims(const Config& c, const Dims& d) {
  return uniform_model_dims(c, {d.hidden, d.vocab, d.layers, d.heads, d.heads, d.head_size, d.inter,
                                d.positions, d.tie, read_norm_eps(c, {"layer_norm_eps"}, 1e-12)});
}

void embeddings(TreeBuilder& b, const Dims& d, std::string_view prefix, std::int64_t width) {
  auto e = b.module("embeddings", cls(prefix, "Embeddings"));
  nn::embedding(b, "word_embeddings", d.vocab, width);
  nn::embedding(b, "position_embeddings", d.positions, width);
  nn::embedding(b, "token_type_embeddings", d.type_vocab, width);
  nn::layer_norm(b, "LayerNorm", width);
  nn::dropout(b, "dropout");
  // torch.arange(max_position_embeddings).expand((1, -1)) and zeros of the same size (long),
  // both persistent=False; registered in 4.40 and still today.
  b.buffer("position_ids", {1, d.positions}, DType::kI64, false);
  b.buffer("token_type_ids", {1, d.positions}, DType::kI64, false);
}

void encoder(TreeBuilder& b, const Dims& d, std::string_view prefix) {
  auto enc = b.module("encoder", cls(prefix, "Encoder"));
  auto list = b.module("layer", "ModuleList");
  for (std::int64_t i = 0; i < d.layers; ++i) {
    auto l = b.item(i, cls(prefix, "Layer"));
    layer(b, d, prefix);
  }
}

void model(TreeBuilder& b, const Dims& d, std::string_view prefix, bool pooling) {
  embeddings(b, d, prefix, d.hidden);
  encoder(b, d, prefix);
  if (pooling) {
    auto p = b.module("pooler", cls(prefix, "Pooler"));
    nn::linear(b, "dense", d.hidden, d.hidden);
    b.stateless("activation", "Tanh");
  }
}

void base(TreeBuilder& b, const Dims& d, std::string_view attr, std::string_view prefix,
          bool pooling) {
  auto m = b.module(attr, cls(prefix, "Model"));
  model(b, d, prefix, pooling);
}

void tied_decoder(TreeBuilder& b, std::string_view name, std::int64_t in, std::int64_t out,
                  bool tie, const std::string& embeddings_weight, const std::string& bias_target) {
  auto s = b.module(name, "Linear");
  if (tie) b.tied_param("weight", embeddings_weight);
  else b.param("weight", {out, in});
  b.tied_param("bias", bias_target);
}

bool shared_head(TreeBuilder& b, std::string_view suffix, std::int64_t hidden, const Config& c,
                 std::string_view classification_head) {
  if (suffix == "ForSequenceClassification" && !classification_head.empty()) {
    auto h = b.module("classifier", classification_head);
    nn::linear(b, "dense", hidden, hidden);
    nn::dropout(b, "dropout");
    nn::linear(b, "out_proj", hidden, num_labels(c));
  } else if (suffix == "ForTokenClassification") {
    nn::dropout(b, "dropout");
    nn::linear(b, "classifier", hidden, num_labels(c));
  } else if (suffix == "ForQuestionAnswering") {
    nn::linear(b, "qa_outputs", hidden, num_labels(c));
  } else if (suffix == "ForMultipleChoice") {
    nn::dropout(b, "dropout");
    nn::linear(b, "classifier", hidden, 1);
  } else {
    return false;
  }
  return true;
}

void unknown_class(std::string_view class_name) {
  throw Error(ErrorCode::kUnknownClass, fmt::format("class '{}' is not described for this model", class_name));
}

}  // namespace memfit::arch::bert

namespace memfit::arch::bert {
namespace {

TensorTree roberta_like_tree(const BuildRequest& r, std::string_view prefix, const Dims& d, bool no_split) {
  TreeBuilder b{std::string(r.class_name)};
  // <Prefix>PreTrainedModel._no_split_modules in 4.40 (later versions add the Sdpa attention
  // class, and current ones move the list to <Prefix>Model as [Embeddings, Layer]).
  if (no_split) b.set_no_split({cls(prefix, "Embeddings"), cls(prefix, "SelfAttention")});
  std::string_view head = r.class_name;
  if (head.substr(0, prefix.size()) == prefix) head.remove_prefix(prefix.size());
  if (head == "Model") {
    model(b, d, prefix, true);
    return b.finish();
  }
  // Only the multiple-choice head keeps the pooler (RobertaModel(config)); the others build
  // RobertaModel(config, add_pooling_layer=False).
  base(b, d, "roberta", prefix, head == "ForMultipleChoice");
  if (head == "ForMaskedLM" || head == "ForCausalLM") {
    // <Prefix>LMHead: dense, layer_norm, decoder (Linear hidden→vocab), bias; then
    // decoder.bias = self.bias, and tie_weights() makes decoder.weight the word embeddings.
    auto h = b.module("lm_head", cls(prefix, "LMHead"));
    b.param("bias", {d.vocab});
    nn::linear(b, "dense", d.hidden, d.hidden);
    nn::layer_norm(b, "layer_norm", d.hidden);
    tied_decoder(b, "decoder", d.hidden, d.vocab, d.tie, "roberta.embeddings.word_embeddings.weight",
                 b.path("bias"));
  } else if (!shared_head(b, head, d.hidden, r.config, cls(prefix, "ClassificationHead"))) {
    unknown_class(r.class_name);
  }
  return b.finish();
}

}  // namespace

TensorTree build_roberta_like(const BuildRequest& r, std::string_view prefix,
                              const Defaults& def, bool no_split) {
  const Dims d = read_dims(r.config, def);
  TensorTree t = roberta_like_tree(r, prefix, d, no_split);
  if (r.dims) *r.dims = model_dims(r.config, d);
  return t;
}

}  // namespace memfit::arch::bert
