// MPNet (transformers models/mpnet/modeling_mpnet.py, 4.40): MPNetModel and its heads — the
// encoder of sentence-transformers' all-mpnet-base-v2. BERT-shaped, with its own module names:
// attention.attn.{q,k,v,o} and attention.LayerNorm; no token types; one relative-position bias
// table (an Embedding of buckets × heads) on the encoder, shared by every layer. RoBERTa-style
// heads under `mpnet`. MPNetPreTrainedModel declares no _no_split_modules.
#include "bert_common.h"
#include "families.h"
#include "family_dims.h"

namespace memfit::arch {
namespace {

struct Dims {
  bert::Dims bert;  // hidden, layers, heads, head size, intermediate, positions, act, tie
  std::int64_t buckets;
};

Dims read(const Config& c) {
  // MPNetConfig(): vocab_size=30527, max_position_embeddings=512, relative_attention_num_buckets=32
  // (no token types: MPNetEmbeddings has none).
  return {bert::read_dims(c, bert::Defaults{30527, 512, 0}), c.dim_or({"relative_attention_num_buckets"}, 32)};
}

void layer(TreeBuilder& b, const bert::Dims& d) {
  {
    auto a = b.module("attention", "MPNetAttention");
    {
      auto s = b.module("attn", "MPNetSelfAttention");
      const std::int64_t all_head = d.heads * d.head_size;
      nn::linear(b, "q", d.hidden, all_head);
      nn::linear(b, "k", d.hidden, all_head);
      nn::linear(b, "v", d.hidden, all_head);
      nn::linear(b, "o", d.hidden, d.hidden);
      nn::dropout(b, "dropout");
    }
    nn::layer_norm(b, "LayerNorm", d.hidden);
    nn::dropout(b, "dropout");
  }
  {
    auto i = b.module("intermediate", "MPNetIntermediate");
    nn::linear(b, "dense", d.hidden, d.inter);
    nn::activation(b, "intermediate_act_fn", d.act);
  }
  auto o = b.module("output", "MPNetOutput");
  nn::linear(b, "dense", d.inter, d.hidden);
  nn::layer_norm(b, "LayerNorm", d.hidden);
  nn::dropout(b, "dropout");
}

// MPNetModel's submodules: embeddings, encoder and (when `pooling`) pooler.
void model(TreeBuilder& b, const Dims& dims, bool pooling) {
  const bert::Dims& d = dims.bert;
  {
    auto e = b.module("embeddings", "MPNetEmbeddings");
    nn::embedding(b, "word_embeddings", d.vocab, d.hidden);
    nn::embedding(b, "position_embeddings", d.positions, d.hidden);
    nn::layer_norm(b, "LayerNorm", d.hidden);
    nn::dropout(b, "dropout");
    // torch.arange(max_position_embeddings).expand((1, -1)), persistent=False.
    b.buffer("position_ids", {1, d.positions}, DType::kI64, false);
  }
  {
    auto enc = b.module("encoder", "MPNetEncoder");
    {
      auto list = b.module("layer", "ModuleList");
      for (std::int64_t i = 0; i < d.layers; ++i) {
        auto l = b.item(i, "MPNetLayer");
        layer(b, d);
      }
    }
    nn::embedding(b, "relative_attention_bias", dims.buckets, d.heads);
  }
  if (pooling) {
    auto p = b.module("pooler", "MPNetPooler");
    nn::linear(b, "dense", d.hidden, d.hidden);
    b.stateless("activation", "Tanh");
  }
}

TensorTree tree(const BuildRequest& r, const Dims& dims) {
  const bert::Dims& d = dims.bert;
  TreeBuilder b{std::string(r.class_name)};
  const std::string_view cls = r.class_name;
  if (cls == "MPNetModel") {
    model(b, dims, true);
    return b.finish();
  }
  // Only the multiple-choice head keeps the pooler (MPNetModel(config)); the others build
  // MPNetModel(config, add_pooling_layer=False).
  {
    auto m = b.module("mpnet", "MPNetModel");
    model(b, dims, cls == "MPNetForMultipleChoice");
  }
  const std::string_view head = cls.substr(std::string_view("MPNet").size());
  if (head == "ForMaskedLM") {
    // MPNetLMHead: dense, layer_norm, decoder (hidden→vocab), bias; decoder.bias = self.bias,
    // and tie_weights() makes decoder.weight the word embeddings.
    auto h = b.module("lm_head", "MPNetLMHead");
    b.param("bias", {d.vocab});
    nn::linear(b, "dense", d.hidden, d.hidden);
    nn::layer_norm(b, "layer_norm", d.hidden);
    bert::tied_decoder(b, "decoder", d.hidden, d.vocab, d.tie, "mpnet.embeddings.word_embeddings.weight",
                       b.path("bias"));
  } else if (!bert::shared_head(b, head, d.hidden, r.config, "MPNetClassificationHead")) {
    bert::unknown_class(r.class_name);
  }
  return b.finish();
}

ModelDims dims_of(const Config& c, const Dims& d) { return bert::model_dims(c, d.bert); }

TensorTree build(const BuildRequest& r) { return build_with_dims(r, read(r.config), tree, dims_of); }

}  // namespace

const Family& mpnet_family() {
  static const Family f{
      "transformers",
      {"mpnet"},
      {{"MPNetModel", "AutoModel"},
       {"MPNetForMaskedLM", "AutoModelForMaskedLM"},
       {"MPNetForSequenceClassification", "AutoModelForSequenceClassification"},
       {"MPNetForTokenClassification", "AutoModelForTokenClassification"},
       {"MPNetForQuestionAnswering", "AutoModelForQuestionAnswering"},
       {"MPNetForMultipleChoice", "AutoModelForMultipleChoice"}},
      &build};
  return f;
}

}  // namespace memfit::arch
