// DeBERTa-v2 and -v3 (transformers models/deberta_v2/modeling_deberta_v2.py, 4.40): DebertaV2Model
// and its heads. Disentangled attention: query_proj/key_proj/value_proj, and with
// relative_attention one table of relative-position embeddings on the encoder (2 ×
// position_buckets rows, else 2 × max_relative_positions), read through the layer's own
// pos_key_proj / pos_query_proj for c2p / p2c unless share_att_key reuses key_proj / query_proj;
// norm_rel_ebd "layer_norm" adds the encoder's LayerNorm, conv_kernel_size > 0 its ConvLayer.
// Embeddings: position embeddings only with position_biased_input, token types only when
// type_vocab_size > 0, embed_proj when embedding_size differs from hidden_size. Dropouts are
// StableDropout modules. DebertaV2PreTrainedModel declares no _no_split_modules.
#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "bert_common.h"
#include "common.h"
#include "families.h"
#include "family_dims.h"
#include "memfit/model/model_dims.h"

namespace memfit::arch {
namespace {

struct Dims {
  std::int64_t vocab, hidden, layers, heads, head_size, inter, positions, type_vocab, embedding_size;
  std::int64_t rel_rows;  // rel_embeddings' rows; 0 without relative_attention
  bool position_biased_input, c2p, p2c, share_att_key, rel_layer_norm, tie;
  std::int64_t conv_kernel, conv_groups;
  std::int64_t pooler_hidden;
  std::string act;
};

// An integer key whose "unset" is -1 or 0 (max_relative_positions, position_buckets, conv_kernel_size).
std::int64_t int_or(const Config& c, const char* key, std::int64_t fallback) {
  const double v = c.number_or({key}, static_cast<double>(fallback));
  if (v != static_cast<double>(static_cast<std::int64_t>(v)) || v > 1e9 || v < -1e9)
    throw Error(ErrorCode::kInvalidValue, fmt::format("{}: '{}' must be an integer, got {}", c.where(), key, v));
  return static_cast<std::int64_t>(v);
}

// "p2c|c2p" → {"p2c", "c2p"}: DebertaV2Config's lower-cased, stripped split of pos_att_type and
// the encoder's of norm_rel_ebd.
std::vector<std::string> bar_list(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return std::tolower(ch); });
  std::vector<std::string> out;
  for (std::size_t start = 0;;) {
    const std::size_t bar = s.find('|', start);
    std::string part = s.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
    part.erase(0, part.find_first_not_of(" \t"));
    part.erase(part.find_last_not_of(" \t") + 1);
    out.push_back(part);
    if (bar == std::string::npos) return out;
    start = bar + 1;
  }
}

// pos_att_type: a list, or one string "p2c|c2p".
std::vector<std::string> pos_att_types(const Config& c) {
  if (!c.has("pos_att_type")) return {};
  const Json& v = c.json().at("pos_att_type");
  if (v.is_string()) return bar_list(v.get<std::string>());
  if (!v.is_array())
    throw Error(ErrorCode::kWrongType, fmt::format("{}: 'pos_att_type' must be a list or a string", c.where()));
  std::vector<std::string> out;
  for (const Json& x : v) {
    if (!x.is_string()) throw Error(ErrorCode::kWrongType, fmt::format("{}: 'pos_att_type' must list strings", c.where()));
    out.push_back(x.get<std::string>());
  }
  return out;
}

Dims read(const Config& c) {
  // DebertaV2Config(): vocab_size=128100, hidden_size=1536, 24 layers, 24 heads, 6144,
  // max_position_embeddings=512, type_vocab_size=0, relative_attention=False,
  // position_biased_input=True, pos_att_type=None, layer_norm_eps=1e-7.
  Dims d{};
  d.vocab = c.dim_or({"vocab_size"}, 128100);
  d.hidden = c.dim_or({"hidden_size"}, 1536);
  d.layers = c.repeats_or({"num_hidden_layers"}, 24);
  d.heads = c.dim_or({"num_attention_heads"}, 24);
  d.inter = c.dim_or({"intermediate_size"}, 6144);
  d.positions = c.dim_or({"max_position_embeddings"}, 512);
  d.type_vocab = c.count_or({"type_vocab_size"}, 0);
  d.embedding_size = c.dim_or({"embedding_size"}, d.hidden);
  require_divisible(c, d.hidden, "hidden_size", d.heads, "num_attention_heads");
  d.head_size = c.dim_or({"attention_head_size"}, d.hidden / d.heads);
  d.position_biased_input = c.flag_or({"position_biased_input"}, true);
  const std::vector<std::string> types = pos_att_types(c);
  d.c2p = std::find(types.begin(), types.end(), "c2p") != types.end();
  d.p2c = std::find(types.begin(), types.end(), "p2c") != types.end();
  d.share_att_key = c.flag_or({"share_att_key"}, false);
  if (c.flag_or({"relative_attention"}, false)) {
    std::int64_t max_rel = int_or(c, "max_relative_positions", -1);
    if (max_rel < 1) max_rel = d.positions;
    const std::int64_t buckets = int_or(c, "position_buckets", -1);
    d.rel_rows = 2 * (buckets > 0 ? buckets : max_rel);
  }
  const std::vector<std::string> norms = bar_list(c.string_or({"norm_rel_ebd"}, "none"));
  d.rel_layer_norm = std::find(norms.begin(), norms.end(), "layer_norm") != norms.end();
  d.conv_kernel = int_or(c, "conv_kernel_size", 0);
  d.conv_groups = d.conv_kernel > 0 ? c.dim_or({"conv_groups"}, 1) : 1;
  if (d.conv_kernel > 0) require_divisible(c, d.hidden, "hidden_size", d.conv_groups, "conv_groups");
  d.pooler_hidden = c.dim_or({"pooler_hidden_size"}, d.hidden);
  d.tie = c.flag_or({"tie_word_embeddings"}, true);
  d.act = c.string_or({"hidden_act"}, "gelu");
  return d;
}

void stable_dropout(TreeBuilder& b, std::string_view name) { b.stateless(name, "StableDropout"); }

void attention(TreeBuilder& b, const Dims& d) {
  auto a = b.module("attention", "DebertaV2Attention");
  {
    auto s = b.module("self", "DisentangledSelfAttention");
    const std::int64_t all_head = d.heads * d.head_size;
    nn::linear(b, "query_proj", d.hidden, all_head);
    nn::linear(b, "key_proj", d.hidden, all_head);
    nn::linear(b, "value_proj", d.hidden, all_head);
    if (d.rel_rows > 0) {
      stable_dropout(b, "pos_dropout");
      if (!d.share_att_key) {
        if (d.c2p) nn::linear(b, "pos_key_proj", d.hidden, all_head);
        if (d.p2c) nn::linear(b, "pos_query_proj", d.hidden, all_head);
      }
    }
    stable_dropout(b, "dropout");
  }
  auto o = b.module("output", "DebertaV2SelfOutput");
  nn::linear(b, "dense", d.hidden, d.hidden);
  nn::layer_norm(b, "LayerNorm", d.hidden);
  stable_dropout(b, "dropout");
}

void layer(TreeBuilder& b, const Dims& d) {
  attention(b, d);
  {
    auto i = b.module("intermediate", "DebertaV2Intermediate");
    nn::linear(b, "dense", d.hidden, d.inter);
    nn::activation(b, "intermediate_act_fn", d.act);
  }
  auto o = b.module("output", "DebertaV2Output");
  nn::linear(b, "dense", d.inter, d.hidden);
  nn::layer_norm(b, "LayerNorm", d.hidden);
  stable_dropout(b, "dropout");
}

void model(TreeBuilder& b, const Dims& d) {
  {
    auto e = b.module("embeddings", "DebertaV2Embeddings");
    nn::embedding(b, "word_embeddings", d.vocab, d.embedding_size);
    if (d.position_biased_input) nn::embedding(b, "position_embeddings", d.positions, d.embedding_size);
    if (d.type_vocab > 0) nn::embedding(b, "token_type_embeddings", d.type_vocab, d.embedding_size);
    if (d.embedding_size != d.hidden) nn::linear(b, "embed_proj", d.embedding_size, d.hidden, /*bias=*/false);
    nn::layer_norm(b, "LayerNorm", d.hidden);
    stable_dropout(b, "dropout");
    // torch.arange(max_position_embeddings).expand((1, -1)), persistent=False.
    b.buffer("position_ids", {1, d.positions}, DType::kI64, false);
  }
  auto enc = b.module("encoder", "DebertaV2Encoder");
  {
    auto list = b.module("layer", "ModuleList");
    for (std::int64_t i = 0; i < d.layers; ++i) {
      auto l = b.item(i, "DebertaV2Layer");
      layer(b, d);
    }
  }
  if (d.rel_rows > 0) nn::embedding(b, "rel_embeddings", d.rel_rows, d.hidden);
  if (d.rel_layer_norm) nn::layer_norm(b, "LayerNorm", d.hidden);
  if (d.conv_kernel > 0) {
    auto c = b.module("conv", "ConvLayer");
    nn::conv1d(b, "conv", d.hidden, d.hidden, d.conv_kernel, true, d.conv_groups);
    nn::layer_norm(b, "LayerNorm", d.hidden);
    stable_dropout(b, "dropout");
  }
}

// ContextPooler: dense (pooler_hidden_size square), dropout; its output_dim is hidden_size.
void context_pooler(TreeBuilder& b, const Dims& d) {
  auto p = b.module("pooler", "ContextPooler");
  nn::linear(b, "dense", d.pooler_hidden, d.pooler_hidden);
  stable_dropout(b, "dropout");
}

TensorTree tree(const BuildRequest& r, const Dims& d) {
  TreeBuilder b{std::string(r.class_name)};
  const std::string_view cls = r.class_name;
  if (cls == "DebertaV2Model") {
    model(b, d);
    return b.finish();
  }
  {
    auto m = b.module("deberta", "DebertaV2Model");
    model(b, d);
  }
  if (cls == "DebertaV2ForMaskedLM") {
    // DebertaV2OnlyMLMHead → predictions: transform (dense hidden → embedding_size, the
    // activation, LayerNorm), decoder (tied to the word embeddings), bias (decoder.bias = bias).
    auto c = b.module("cls", "DebertaV2OnlyMLMHead");
    auto p = b.module("predictions", "DebertaV2LMPredictionHead");
    b.param("bias", {d.vocab});
    {
      auto t = b.module("transform", "DebertaV2PredictionHeadTransform");
      nn::linear(b, "dense", d.hidden, d.embedding_size);
      nn::activation(b, "transform_act_fn", d.act);
      nn::layer_norm(b, "LayerNorm", d.embedding_size);
    }
    auto dec = b.module("decoder", "Linear");
    if (d.tie) b.tied_param("weight", "deberta.embeddings.word_embeddings.weight");
    else b.param("weight", {d.vocab, d.embedding_size});
    b.tied_param("bias", "cls.predictions.bias");
  } else if (cls == "DebertaV2ForSequenceClassification" || cls == "DebertaV2ForMultipleChoice") {
    context_pooler(b, d);
    nn::linear(b, "classifier", d.hidden, cls == "DebertaV2ForMultipleChoice" ? 1 : num_labels(r.config));
    stable_dropout(b, "dropout");
  } else if (!bert::shared_head(b, cls.substr(std::string_view("DebertaV2").size()), d.hidden, r.config)) {
    bert::unknown_class(r.class_name);
  }
  return b.finish();
}

ModelDims dims(const Config& c, const Dims& d) {
  return uniform_model_dims(c, {d.hidden, d.vocab, d.layers, d.heads, d.heads, d.head_size, d.inter, d.positions,
                                d.tie, read_norm_eps(c, {"layer_norm_eps"}, 1e-7)});
}

TensorTree build(const BuildRequest& r) { return build_with_dims(r, read(r.config), tree, dims); }

}  // namespace

const Family& deberta_v2_family() {
  static const Family f{
      "transformers",
      {"deberta-v2"},
      {{"DebertaV2Model", "AutoModel"},
       {"DebertaV2ForMaskedLM", "AutoModelForMaskedLM"},
       {"DebertaV2ForSequenceClassification", "AutoModelForSequenceClassification"},
       {"DebertaV2ForTokenClassification", "AutoModelForTokenClassification"},
       {"DebertaV2ForQuestionAnswering", "AutoModelForQuestionAnswering"},
       {"DebertaV2ForMultipleChoice", "AutoModelForMultipleChoice"}},
      &build};
  return f;
}

}  // namespace memfit::arch
