// Encoder families: bert, roberta, xlm-roberta, camembert, mpnet, electra, deberta-v2, distilbert, albert, vit, dinov2, clip.
//
// Authorities: accelerate's documented `accelerate estimate-memory bert-base-cased` table, the
// published parameter counts of the checkpoints (model cards / papers), and hand arithmetic
// from the transformers 4.40 modeling files, written out next to each figure. Fixtures are the
// public config.json files of the checkpoints.
#include <doctest/doctest.h>

#include <string>

#include "memfit/memory/estimate.h"
#include "support/reference.h"

namespace {

using memfit::DType;
using memfit::ErrorCode;
using memfit::EstimateRequest;
using memfit::Mode;
using memfit::Report;
using memfit::TensorTree;

EstimateRequest request(const std::string& fixture, Mode mode, const std::string& cls = "") {
  EstimateRequest req;
  req.config_text = memfit::test::fixture("configs/" + fixture);
  req.name = fixture;
  req.library = "transformers";
  req.mode = mode;
  req.class_override = cls;
  return req;
}

TensorTree tree(const std::string& fixture, const std::string& cls = "") {
  auto r = memfit::build_tree(request(fixture, Mode::kMemfit, cls));
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message()));
  return r.value();
}

Report report(const std::string& fixture, Mode mode, const std::string& cls = "") {
  auto r = memfit::estimate(request(fixture, mode, cls));
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message()));
  return r.value();
}

// Builds a tree from inline JSON.
memfit::Result<TensorTree> inline_tree(const std::string& json) {
  EstimateRequest req;
  req.config_text = json;
  req.name = "inline";
  req.library = "transformers";
  return memfit::build_tree(req);
}

ErrorCode error_of(const std::string& json) {
  auto r = inline_tree(json);
  REQUIRE_FALSE(r.ok());
  return r.error().code();
}

void check_tensor(const TensorTree& t, const std::string& name, const memfit::Shape& shape) {
  const int i = t.find_tensor(name);
  REQUIRE_MESSAGE(i >= 0, name);
  CHECK_MESSAGE(t.tensors[i].shape == shape, name);
}

// `alias` is a tied name whose tensor is `target` (counted once, under `target`).
void check_tied(const TensorTree& t, const std::string& alias, const std::string& target) {
  const int a = t.find_tensor(alias);
  const int b = t.find_tensor(target);
  REQUIRE_MESSAGE(a >= 0, alias);
  REQUIRE_MESSAGE(b >= 0, target);
  CHECK_MESSAGE(t.tensors[a].tied_to == b, alias);
  CHECK_FALSE(t.tensors[b].is_alias());
}

std::string first_parameter(const TensorTree& t) { return t.tensors[t.named_parameters()[0]].name; }

}  // namespace

TEST_CASE("bert: accelerate's documented bert-base-cased table (compat)") {
  // accelerate docs, `accelerate estimate-memory bert-base-cased`: BertModel (no auto_map).
  const Report r = report("bert-base-cased.json", Mode::kAccelerate);
  CHECK(r.model_class == "BertModel");
  // BertModel: embeddings 28996*768 + 512*768 + 2*768 + LN 2*768 = 22,665,216;
  // 12 layers * 7,087,872 (q,k,v,o 4*(768*768+768), LN 1536 twice, 768*3072+3072,
  // 3072*768+768) = 85,054,464; pooler 768*768+768 = 590,592 → 108,310,272.
  CHECK(r.parameters == 108310272);
  REQUIRE(r.rows.size() == 4);
  CHECK(r.rows[0].dtype == "float32");
  CHECK(r.rows[0].largest_layer == "84.95 MB");
  CHECK(r.rows[0].total == "413.18 MB");
  CHECK(r.rows[0].training == "1.61 GB");
  CHECK(r.rows[1].largest_layer == "42.47 MB");
  CHECK(r.rows[1].total == "206.59 MB");
  CHECK(r.rows[2].largest_layer == "21.24 MB");
  CHECK(r.rows[2].total == "103.29 MB");
  CHECK(r.rows[3].largest_layer == "10.62 MB");
  CHECK(r.rows[3].total == "51.65 MB");
  // 413.18 MB is 108,310,272 * 4 + the two int64 [1, 512] buffers (8192 bytes); 84.95 MB is
  // embeddings.word_embeddings, 28996 * 768 * 4 bytes (4.40 BERT has no _no_split_modules).
  CHECK(r.rows[0].total_bytes == 433249280.0);
  CHECK(r.rows[0].largest_layer_bytes == 89075712.0);
  REQUIRE_FALSE(r.largest_layer_names.empty());
  CHECK(r.largest_layer_names[0] == "embeddings.word_embeddings");
}

TEST_CASE("bert: BertForMaskedLM from architectures, tied decoder and buffers") {
  const TensorTree t = tree("bert-base-cased.json");
  CHECK(t.class_name() == "BertForMaskedLM");
  // BertModel without the pooler (107,719,680) + cls.predictions: bias 28996, transform.dense
  // 768*768+768, transform.LayerNorm 1536; decoder.weight is the word embeddings and
  // decoder.bias is cls.predictions.bias → 108,340,804.
  CHECK(t.parameter_count() == 108340804);
  CHECK(t.find_tensor("bert.pooler.dense.weight") < 0);
  check_tied(t, "cls.predictions.decoder.weight", "bert.embeddings.word_embeddings.weight");
  check_tied(t, "cls.predictions.decoder.bias", "cls.predictions.bias");
  check_tensor(t, "bert.embeddings.word_embeddings.weight", {28996, 768});
  check_tensor(t, "bert.embeddings.token_type_embeddings.weight", {2, 768});
  check_tensor(t, "bert.encoder.layer.11.attention.self.query.weight", {768, 768});
  check_tensor(t, "bert.encoder.layer.0.intermediate.dense.weight", {3072, 768});
  check_tensor(t, "bert.encoder.layer.0.output.dense.weight", {768, 3072});
  check_tensor(t, "cls.predictions.transform.LayerNorm.bias", {768});
  check_tensor(t, "cls.predictions.bias", {28996});
  CHECK(first_parameter(t) == "bert.embeddings.word_embeddings.weight");
  // Buffers: embeddings.position_ids and token_type_ids, int64 [1, 512], non-persistent.
  const auto buffers = t.named_buffers();
  REQUIRE(buffers.size() == 2);
  for (int i : buffers) {
    CHECK(t.tensors[i].dtype == DType::kI64);
    CHECK(t.tensors[i].shape == memfit::Shape{1, 512});
    CHECK_FALSE(t.tensors[i].persistent);
    CHECK(t.tensors[i].era == memfit::BufferEra::kAlways);
  }
  CHECK(t.tensors[buffers[0]].name == "bert.embeddings.position_ids");
  CHECK(t.tensors[buffers[1]].name == "bert.embeddings.token_type_ids");
  CHECK(t.no_split_classes.empty());
}

TEST_CASE("bert: other heads and options") {
  // BertForSequenceClassification keeps the pooler: 108,310,272 + 768*2+2 (2 default labels).
  CHECK(tree("bert-base-cased.json", "BertForSequenceClassification").parameter_count() ==
        108311810);
  // BertForPreTraining: BertModel + predictions (621,124) + seq_relationship 768*2+2.
  const TensorTree pre = tree("bert-base-cased.json", "BertForPreTraining");
  CHECK(pre.parameter_count() == 108310272 + 621124 + 1538);
  check_tied(pre, "cls.predictions.decoder.weight", "bert.embeddings.word_embeddings.weight");
  check_tensor(pre, "cls.seq_relationship.weight", {2, 768});
  CHECK(tree("bert-base-cased.json", "BertLMHeadModel").parameter_count() == 108340804);

  // tie_word_embeddings=false: the decoder gets its own [vocab, hidden] weight.
  EstimateRequest req = request("bert-base-cased.json", Mode::kMemfit, "BertForMaskedLM");
  req.config_text.insert(1, "\"tie_word_embeddings\": false,");
  auto untied = memfit::build_tree(req);
  REQUIRE(untied.ok());
  CHECK(untied->parameter_count() == 108340804 + 28996 * 768);
  CHECK_FALSE(untied->tensors[untied->find_tensor("cls.predictions.decoder.weight")].is_alias());

  // position_embedding_type=relative_key adds distance_embedding [2*512-1, 64] per self-attention.
  req = request("bert-base-cased.json", Mode::kMemfit, "BertModel");
  req.config_text.insert(1, "\"position_embedding_type\": \"relative_key\",");
  req.config_text.replace(req.config_text.find("\"position_embedding_type\": \"absolute\","),
                          std::string("\"position_embedding_type\": \"absolute\",").size(), "");
  auto relative = memfit::build_tree(req);
  REQUIRE_MESSAGE(relative.ok(), (relative.ok() ? "" : relative.error().message()));
  CHECK(relative->parameter_count() == 108310272 + 12 * 1023 * 64);
  check_tensor(*relative, "encoder.layer.3.attention.self.distance_embedding.weight", {1023, 64});
}

TEST_CASE("bert: bad configs") {
  CHECK(error_of(R"({"model_type": "bert", "hidden_size": 0})") == ErrorCode::kInvalidValue);
  // 12 heads do not divide 100 (BertSelfAttention raises).
  CHECK(error_of(R"({"model_type": "bert", "hidden_size": 100})") == ErrorCode::kInvalidValue);
  // Cross-attention without is_decoder is refused by BertLayer.
  CHECK(error_of(R"({"model_type": "bert", "add_cross_attention": true})") ==
        ErrorCode::kInvalidValue);
  CHECK(error_of(R"({"model_type": "bert", "vocab_size": "big"})") == ErrorCode::kWrongType);
}

TEST_CASE("roberta: roberta-base") {
  // RobertaModel: embeddings 50265*768 + 514*768 + 1*768 + 1536 = 39,000,576; 12 layers
  // 85,054,464; pooler 590,592 → 124,645,632 (the roberta-base count).
  const Report compat = report("roberta-base.json", Mode::kAccelerate);
  CHECK(compat.model_class == "RobertaModel");
  CHECK(compat.parameters == 124645632);
  // + two int64 [1, 514] buffers = 498,590,752 bytes.
  CHECK(compat.rows[0].total_bytes == 498590752.0);
  CHECK(compat.rows[0].total == "475.49 MB");
  // RobertaPreTrainedModel._no_split_modules (4.40) = [RobertaEmbeddings, RobertaSelfAttention]:
  // the whole embeddings module is the largest layer, 39,000,576 * 4 + 8,224 bytes.
  REQUIRE_FALSE(compat.largest_layer_names.empty());
  CHECK(compat.largest_layer_names[0] == "embeddings");
  CHECK(compat.rows[0].largest_layer_bytes == 156010528.0);
  CHECK(compat.rows[0].largest_layer == "148.78 MB");

  const TensorTree mlm = tree("roberta-base.json");
  CHECK(mlm.class_name() == "RobertaForMaskedLM");
  // No pooler (124,055,040) + lm_head: bias 50265, dense 590,592, layer_norm 1536.
  CHECK(mlm.parameter_count() == 124697433);
  check_tied(mlm, "lm_head.decoder.weight", "roberta.embeddings.word_embeddings.weight");
  check_tied(mlm, "lm_head.decoder.bias", "lm_head.bias");
  check_tensor(mlm, "roberta.embeddings.position_embeddings.weight", {514, 768});
  check_tensor(mlm, "roberta.embeddings.token_type_embeddings.weight", {1, 768});
  CHECK(mlm.no_split_classes ==
        std::vector<std::string>{"RobertaEmbeddings", "RobertaSelfAttention"});

  // RobertaForSequenceClassification: no pooler, classifier.dense 590,592 + out_proj 768*2+2.
  const TensorTree cls = tree("roberta-base.json", "RobertaForSequenceClassification");
  CHECK(cls.parameter_count() == 124055040 + 590592 + 1538);
  check_tensor(cls, "classifier.out_proj.weight", {2, 768});
  check_tensor(cls, "classifier.dense.weight", {768, 768});
}

TEST_CASE("xlm-roberta: xlm-roberta-base") {
  // XLMRobertaModel: 250002*768 + 514*768 + 768 + 1536 = 192,398,592; + 85,054,464 + 590,592
  // = 278,043,648 (xlm-roberta-base, "278M").
  const Report compat = report("xlm-roberta-base.json", Mode::kAccelerate);
  CHECK(compat.model_class == "XLMRobertaModel");
  CHECK(compat.parameters == 278043648);
  const TensorTree mlm = tree("xlm-roberta-base.json");
  CHECK(mlm.class_name() == "XLMRobertaForMaskedLM");
  CHECK(mlm.parameter_count() == 278043648 - 590592 + 250002 + 590592 + 1536);
  check_tied(mlm, "lm_head.decoder.weight", "roberta.embeddings.word_embeddings.weight");
  const int head = mlm.find_module("lm_head");
  REQUIRE(head >= 0);
  CHECK(mlm.modules[head].class_name == "XLMRobertaLMHead");
  CHECK(mlm.no_split_classes ==
        std::vector<std::string>{"XLMRobertaEmbeddings", "XLMRobertaSelfAttention"});
  check_tensor(mlm, "roberta.embeddings.word_embeddings.weight", {250002, 768});
}

TEST_CASE("camembert: RoBERTa's modules under Camembert* names, no _no_split_modules") {
  // camembert-base's sizes (vocab 32005, 514 positions, one token type), its published "110M".
  const char* kConfig = R"({"model_type": "camembert", "architectures": ["CamembertForMaskedLM"],
    "vocab_size": 32005, "max_position_embeddings": 514, "type_vocab_size": 1, "layer_norm_eps": 1e-05})";
  auto built = inline_tree(kConfig);
  REQUIRE_MESSAGE(built.ok(), (built.ok() ? "" : built.error().message()));
  const TensorTree& mlm = built.value();
  CHECK(mlm.class_name() == "CamembertForMaskedLM");
  // Embeddings 32005·768 + 514·768 + 768 + 1536 = 24,976,896; 12 layers of 7,087,872; no pooler;
  // lm_head: bias 32005, dense 590,592, layer_norm 1536, decoder tied to the word embeddings.
  CHECK(mlm.parameter_count() == 24976896 + 12 * 7087872 + 32005 + 590592 + 1536);
  check_tied(mlm, "lm_head.decoder.weight", "roberta.embeddings.word_embeddings.weight");
  check_tensor(mlm, "roberta.encoder.layer.11.output.dense.weight", {768, 3072});
  const int head = mlm.find_module("lm_head");
  REQUIRE(head >= 0);
  CHECK(mlm.modules[head].class_name == "CamembertLMHead");
  const int emb = mlm.find_module("roberta.embeddings");
  REQUIRE(emb >= 0);
  CHECK(mlm.modules[emb].class_name == "CamembertEmbeddings");
  // CamembertPreTrainedModel (4.40) declares none: accelerate may split any module.
  CHECK(mlm.no_split_classes.empty());
  // CamembertModel keeps the pooler: + 590,592 (110,621,952 in all).
  std::string model_config = kConfig;
  model_config.replace(model_config.find("CamembertForMaskedLM"), 20, "CamembertModel");
  auto base = inline_tree(model_config);
  REQUIRE(base.ok());
  CHECK(base.value().parameter_count() == 110621952);
  check_tensor(base.value(), "pooler.dense.weight", {768, 768});
}

TEST_CASE("mpnet: all-mpnet-base-v2's encoder and the masked-LM head") {
  // all-mpnet-base-v2's sizes (vocab 30527, 514 positions, 32 buckets); sentence-transformers loads
  // it as MPNetModel: 109,486,464 parameters (its safetensors' count):
  // embeddings 30527·768 + 514·768 + 1536 = 23,841,024; 12 layers of 7,087,872 (q, k, v, o
  // 4·590,592, two LayerNorms, 768→3072→768); the bias table 32·12 = 384; pooler 590,592.
  const char* kConfig = R"({"model_type": "mpnet", "architectures": ["MPNetModel"], "vocab_size": 30527,
    "max_position_embeddings": 514, "relative_attention_num_buckets": 32, "layer_norm_eps": 1e-05})";
  auto built = inline_tree(kConfig);
  REQUIRE_MESSAGE(built.ok(), (built.ok() ? "" : built.error().message()));
  const TensorTree& m = built.value();
  CHECK(m.parameter_count() == 109486464);
  check_tensor(m, "encoder.relative_attention_bias.weight", {32, 12});
  check_tensor(m, "encoder.layer.0.attention.attn.q.weight", {768, 768});
  check_tensor(m, "encoder.layer.11.attention.LayerNorm.weight", {768});
  check_tensor(m, "encoder.layer.11.output.dense.weight", {768, 3072});
  check_tensor(m, "embeddings.position_embeddings.weight", {514, 768});
  CHECK(m.find_module("embeddings.token_type_embeddings") < 0);
  CHECK(m.no_split_classes.empty());
  // MPNetForMaskedLM: no pooler; lm_head bias 30527, dense 590,592, layer_norm 1536, the decoder
  // tied to the word embeddings and its bias to lm_head.bias.
  std::string mlm_config = kConfig;
  mlm_config.replace(mlm_config.find("MPNetModel"), 10, "MPNetForMaskedLM");
  auto mlm = inline_tree(mlm_config);
  REQUIRE(mlm.ok());
  CHECK(mlm.value().parameter_count() == 109486464 - 590592 + 30527 + 590592 + 1536);
  check_tied(mlm.value(), "lm_head.decoder.weight", "mpnet.embeddings.word_embeddings.weight");
  check_tied(mlm.value(), "lm_head.decoder.bias", "lm_head.bias");
}

TEST_CASE("electra: the small discriminator and generator, the base discriminator") {
  // electra-small-discriminator's sizes: embedding_size 128, hidden 256, 4 heads, 1024, 12 layers.
  // ElectraModel: embeddings 30522·128 + 512·128 + 2·128 + 256 = 3,972,864; embeddings_project
  // 128·256 + 256 = 33,024; 12 layers of 789,760 (4·(256·256 + 256) + 2·512 + 256·1024 + 1024
  // + 1024·256 + 256) — 13,483,008, the published "13.5M".
  const char* kSmall = R"({"model_type": "electra", "architectures": ["ElectraForPreTraining"],
    "embedding_size": 128, "hidden_size": 256, "num_attention_heads": 4, "intermediate_size": 1024,
    "num_hidden_layers": 12, "vocab_size": 30522, "max_position_embeddings": 512, "type_vocab_size": 2})";
  auto disc = inline_tree(kSmall);
  REQUIRE_MESSAGE(disc.ok(), (disc.ok() ? "" : disc.error().message()));
  constexpr std::uint64_t kSmallModel = 3972864 + 33024 + 12 * 789760;
  // + discriminator_predictions: dense 256·256 + 256, dense_prediction 256 + 1.
  CHECK(disc.value().parameter_count() == kSmallModel + 65792 + 257);
  check_tensor(disc.value(), "electra.embeddings_project.weight", {256, 128});
  check_tensor(disc.value(), "electra.embeddings.word_embeddings.weight", {30522, 128});
  check_tensor(disc.value(), "electra.encoder.layer.11.attention.self.query.weight", {256, 256});
  check_tensor(disc.value(), "discriminator_predictions.dense_prediction.weight", {1, 256});
  CHECK(disc.value().no_split_classes.empty());
  // The generator: generator_predictions LayerNorm(128) + dense 256→128, the LM head's bias; its
  // weight is the word embeddings.
  std::string gen_config = kSmall;
  gen_config.replace(gen_config.find("ElectraForPreTraining"), 21, "ElectraForMaskedLM");
  auto gen = inline_tree(gen_config);
  REQUIRE(gen.ok());
  CHECK(gen.value().parameter_count() == kSmallModel + 256 + 32896 + 30522);
  check_tied(gen.value(), "generator_lm_head.weight", "electra.embeddings.word_embeddings.weight");
  // electra-base-discriminator: embedding_size = hidden = 768, so no embeddings_project.
  auto base = inline_tree(R"({"model_type": "electra", "architectures": ["ElectraModel"], "embedding_size": 768,
    "hidden_size": 768, "num_attention_heads": 12, "intermediate_size": 3072, "num_hidden_layers": 12})");
  REQUIRE(base.ok());
  CHECK(base.value().parameter_count() == 30522 * 768 + 512 * 768 + 2 * 768 + 1536 + 12 * 7087872);
  CHECK(base.value().find_module("embeddings_project") < 0);
  // ElectraForMultipleChoice: SequenceSummary's summary Linear(768, 768) and a 768→1 classifier.
  auto mc = inline_tree(R"({"model_type": "electra", "architectures": ["ElectraForMultipleChoice"],
    "embedding_size": 768, "hidden_size": 768, "num_attention_heads": 12, "intermediate_size": 3072})");
  REQUIRE(mc.ok());
  check_tensor(mc.value(), "sequence_summary.summary.weight", {768, 768});
  CHECK(mc.value().parameter_count() == base.value().parameter_count() + 590592 + 769);
  // summary_use_proj null is Python's None: no projection (an Identity), as SequenceSummary reads it.
  auto mc_plain = inline_tree(R"({"model_type": "electra", "architectures": ["ElectraForMultipleChoice"],
    "embedding_size": 768, "hidden_size": 768, "num_attention_heads": 12, "intermediate_size": 3072,
    "summary_use_proj": null, "summary_activation": null})");
  REQUIRE(mc_plain.ok());
  CHECK(mc_plain.value().parameter_count() == base.value().parameter_count() + 769);
}

TEST_CASE("deberta-v2: deberta-v3-base (shared keys, buckets) and v2-xlarge (own c2p/p2c projections, conv)") {
  // deberta-v3-base's config: relative attention over 256 buckets, share_att_key, no absolute
  // positions, no token types. DebertaV2Model: word embeddings 128100·768 + LayerNorm 1536 (the
  // paper's "98M parameters in the embedding layer"); 12 layers of 7,087,872 (as BERT's); the
  // relative table 2·256·768 = 393,216 and its LayerNorm 1536 — 183,831,552 ("184M").
  const char* kV3 = R"({"model_type": "deberta-v2", "architectures": ["DebertaV2Model"], "hidden_size": 768,
    "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072, "max_position_embeddings": 512,
    "relative_attention": true, "position_buckets": 256, "norm_rel_ebd": "layer_norm", "share_att_key": true,
    "pos_att_type": "p2c|c2p", "layer_norm_eps": 1e-7, "max_relative_positions": -1,
    "position_biased_input": false, "type_vocab_size": 0, "vocab_size": 128100})";
  auto v3 = inline_tree(kV3);
  REQUIRE_MESSAGE(v3.ok(), (v3.ok() ? "" : v3.error().message()));
  CHECK(v3.value().parameter_count() == 98382336 + 12 * 7087872 + 393216 + 1536);
  check_tensor(v3.value(), "encoder.rel_embeddings.weight", {512, 768});
  check_tensor(v3.value(), "encoder.layer.0.attention.self.query_proj.weight", {768, 768});
  CHECK(v3.value().find_module("encoder.layer.0.attention.self.pos_key_proj") < 0);
  CHECK(v3.value().find_module("embeddings.position_embeddings") < 0);
  CHECK(v3.value().no_split_classes.empty());
  // DebertaV2ForSequenceClassification: + ContextPooler dense 590,592 + classifier 768·3 + 3.
  std::string cls_config = kV3;
  cls_config.replace(cls_config.find("DebertaV2Model"), 14, "DebertaV2ForSequenceClassification");
  cls_config.insert(cls_config.size() - 1, R"(, "num_labels": 3)");
  auto cls = inline_tree(cls_config);
  REQUIRE_MESSAGE(cls.ok(), (cls.ok() ? "" : cls.error().message()));
  CHECK(cls.value().parameter_count() == v3.value().parameter_count() + 590592 + 2307);
  check_tensor(cls.value(), "pooler.dense.weight", {768, 768});

  // deberta-v2-xlarge's config: c2p|p2c with their own projections, max_relative_positions 512
  // (no buckets), a ConvLayer of kernel 3, absolute positions off, 1536 wide, 24 layers.
  // Per layer: q, k, v, pos_key_proj, pos_query_proj, dense 6·(1536² + 1536) + 2 LayerNorms
  // 6144 + 1536·6144 + 6144 + 6144·1536 + 1536 = 33,064,704.
  auto xl = inline_tree(R"({"model_type": "deberta-v2", "architectures": ["DebertaV2Model"], "hidden_size": 1536,
    "num_hidden_layers": 24, "num_attention_heads": 24, "intermediate_size": 6144, "relative_attention": true,
    "max_relative_positions": -1, "pos_att_type": ["c2p", "p2c"], "conv_kernel_size": 3, "conv_act": "gelu",
    "norm_rel_ebd": "layer_norm", "position_biased_input": false, "type_vocab_size": 0, "vocab_size": 128100})");
  REQUIRE_MESSAGE(xl.ok(), (xl.ok() ? "" : xl.error().message()));
  constexpr std::uint64_t kLayer = 6 * (1536 * 1536 + 1536) + 2 * 3072 + 1536 * 6144 + 6144 + 6144 * 1536 + 1536;
  // embeddings 128100·1536 + 3072; the relative table 2·512·1536 + 3072; conv 1536·1536·3 + 1536 + 3072.
  CHECK(xl.value().parameter_count() ==
        128100 * 1536 + 3072 + 24 * kLayer + 1024 * 1536 + 3072 + 1536 * 1536 * 3 + 1536 + 3072);
  check_tensor(xl.value(), "encoder.conv.conv.weight", {1536, 1536, 3});
  check_tensor(xl.value(), "encoder.layer.23.attention.self.pos_query_proj.weight", {1536, 1536});
  // A pos_att_type that is neither a list nor a string is named.
  CHECK((error_of(R"({"model_type": "deberta-v2", "pos_att_type": 3})") == ErrorCode::kWrongType));
}

TEST_CASE("dinov2: dinov2-base, and the SwiGLU MLP of dinov2-giant") {
  // dinov2-base's config: 518-pixel images in 14-pixel patches (37² = 1369 + CLS positions).
  // Embeddings: cls 768 + mask 768 + Conv2d 3·14·14·768 + 768 + positions 1370·768 = 1,506,048;
  // 12 layers of 7,089,408 (two LayerNorms, q/k/v/dense 4·590,592, two scales 2·768, fc1/fc2
  // 768↔3072); final LayerNorm 1536 — 86,580,480 ("86.6M").
  const char* kBase = R"({"model_type": "dinov2", "architectures": ["Dinov2Model"], "hidden_size": 768,
    "num_hidden_layers": 12, "num_attention_heads": 12, "image_size": 518, "patch_size": 14, "mlp_ratio": 4,
    "layerscale_value": 1.0, "use_swiglu_ffn": false})";
  auto base = inline_tree(kBase);
  REQUIRE_MESSAGE(base.ok(), (base.ok() ? "" : base.error().message()));
  CHECK(base.value().parameter_count() == 86580480);
  check_tensor(base.value(), "embeddings.mask_token", {1, 768});
  check_tensor(base.value(), "embeddings.position_embeddings", {1, 1370, 768});
  check_tensor(base.value(), "encoder.layer.11.layer_scale2.lambda1", {768});
  check_tensor(base.value(), "encoder.layer.0.mlp.fc1.weight", {3072, 768});
  CHECK(base.value().no_split_classes == std::vector<std::string>{"Dinov2SwiGLUFFN"});
  // dinov2-giant: hidden 1536, 40 layers, 24 heads, SwiGLU: int(6144·2/3) rounded up to 8 = 4096,
  // weights_in 1536 → 8192, weights_out 4096 → 1536.
  auto giant = inline_tree(R"({"model_type": "dinov2", "architectures": ["Dinov2Model"], "hidden_size": 1536,
    "num_hidden_layers": 40, "num_attention_heads": 24, "image_size": 518, "patch_size": 14, "mlp_ratio": 4,
    "use_swiglu_ffn": true})");
  REQUIRE_MESSAGE(giant.ok(), (giant.ok() ? "" : giant.error().message()));
  check_tensor(giant.value(), "encoder.layer.39.mlp.weights_in.weight", {8192, 1536});
  check_tensor(giant.value(), "encoder.layer.39.mlp.weights_out.weight", {1536, 4096});
  constexpr std::uint64_t kGiantLayer = 2 * 3072 + 4 * (1536 * 1536 + 1536) + 2 * 1536 + (1536 * 8192 + 8192) +
                                        (4096 * 1536 + 1536);
  CHECK(giant.value().parameter_count() == 2 * 1536 + (3 * 14 * 14 * 1536 + 1536) + 1370 * 1536 + 40 * kGiantLayer + 3072);
  // The classifier reads CLS and the patches' mean: Linear(2·768, 1000).
  std::string cls_config = kBase;
  cls_config.replace(cls_config.find("Dinov2Model"), 11, "Dinov2ForImageClassification");
  cls_config.insert(cls_config.size() - 1, R"(, "num_labels": 1000)");
  auto cls = inline_tree(cls_config);
  REQUIRE(cls.ok());
  check_tensor(cls.value(), "classifier.weight", {1000, 1536});

  // DINOv2 with registers: dinov2-base plus 4 register tokens (4·768), under its own names.
  std::string reg_config = kBase;
  reg_config.replace(reg_config.find("\"dinov2\""), 8, "\"dinov2_with_registers\"");
  reg_config.replace(reg_config.find("Dinov2Model"), 11, "Dinov2WithRegistersForImageClassification");
  reg_config.insert(reg_config.size() - 1, R"(, "num_labels": 1000)");
  auto reg = inline_tree(reg_config);
  REQUIRE_MESSAGE(reg.ok(), (reg.ok() ? "" : reg.error().message()));
  check_tensor(reg.value(), "dinov2_with_registers.embeddings.register_tokens", {1, 4, 768});
  CHECK(reg.value().parameter_count() == 86580480 + 4 * 768 + 1536 * 1000 + 1000);
  CHECK(reg.value().no_split_classes == std::vector<std::string>{"Dinov2WithRegistersSwiGLUFFN"});
  const int layer = reg.value().find_module("dinov2_with_registers.encoder.layer.0");
  REQUIRE(layer >= 0);
  CHECK(reg.value().modules[layer].class_name == "Dinov2WithRegistersLayer");
}

TEST_CASE("distilbert: distilbert-base-uncased") {
  // DistilBertModel: 30522*768 + 512*768 + 1536 = 23,835,648; 6 blocks of 7,087,872
  // → 66,362,880 (the DistilBERT paper's 66M).
  const Report compat = report("distilbert-base-uncased.json", Mode::kAccelerate);
  CHECK(compat.model_class == "DistilBertModel");
  CHECK(compat.parameters == 66362880);
  CHECK(compat.rows[0].total_bytes == 66362880.0 * 4 + 512 * 8);  // + position_ids int64

  const TensorTree mlm = tree("distilbert-base-uncased.json");
  CHECK(mlm.class_name() == "DistilBertForMaskedLM");
  // + vocab_transform 590,592 + vocab_layer_norm 1536 + vocab_projector.bias 30522.
  CHECK(mlm.parameter_count() == 66985530);
  check_tied(mlm, "vocab_projector.weight", "distilbert.embeddings.word_embeddings.weight");
  check_tensor(mlm, "distilbert.transformer.layer.5.ffn.lin1.weight", {3072, 768});
  check_tensor(mlm, "distilbert.transformer.layer.0.attention.q_lin.weight", {768, 768});
  check_tensor(mlm, "vocab_projector.bias", {30522});
  CHECK(mlm.find_tensor("distilbert.embeddings.token_type_ids") < 0);
  check_tensor(mlm, "distilbert.embeddings.position_ids", {1, 512});
  CHECK(mlm.no_split_classes.empty());

  const TensorTree cls = tree("distilbert-base-uncased.json", "DistilBertForSequenceClassification");
  CHECK(cls.parameter_count() == 66362880 + 590592 + 1538);
  CHECK(error_of(R"({"model_type": "distilbert", "n_heads": 5})") == ErrorCode::kInvalidValue);
}

TEST_CASE("albert: albert-base-v2") {
  // AlbertModel: embeddings 30000*128 + 512*128 + 2*128 + 256 = 3,906,048; mapping_in
  // 128*768+768 = 99,072; one shared AlbertLayer 7,087,872; pooler 590,592 → 11,683,584
  // (ALBERT-base, "12M" in the paper).
  const Report compat = report("albert-base-v2.json", Mode::kAccelerate);
  CHECK(compat.model_class == "AlbertModel");
  CHECK(compat.parameters == 11683584);

  const TensorTree mlm = tree("albert-base-v2.json");
  CHECK(mlm.class_name() == "AlbertForMaskedLM");
  // No pooler (11,092,992) + predictions: bias 30000, LayerNorm 256, dense 768*128+128.
  CHECK(mlm.parameter_count() == 11683584 - 590592 + 30000 + 256 + 98432);
  check_tied(mlm, "predictions.decoder.weight", "albert.embeddings.word_embeddings.weight");
  check_tied(mlm, "predictions.decoder.bias", "predictions.bias");
  check_tensor(mlm, "albert.encoder.embedding_hidden_mapping_in.weight", {768, 128});
  check_tensor(mlm,
               "albert.encoder.albert_layer_groups.0.albert_layers.0.attention.query.weight",
               {768, 768});
  check_tensor(mlm, "albert.encoder.albert_layer_groups.0.albert_layers.0.ffn.weight",
               {3072, 768});
  CHECK(mlm.find_tensor("albert.encoder.albert_layer_groups.1.albert_layers.0.ffn.weight") < 0);
  check_tensor(mlm, "predictions.dense.weight", {128, 768});
  CHECK(mlm.named_buffers().size() == 2);

  // Sequence classification keeps the pooler: + classifier 768*2+2.
  CHECK(tree("albert-base-v2.json", "AlbertForSequenceClassification").parameter_count() ==
        11683584 + 1538);
}

TEST_CASE("vit: google/vit-base-patch16-224") {
  // ViTForImageClassification: embeddings cls 768 + pos 197*768 + conv 768*3*16*16+768 =
  // 742,656; 12 ViTLayers 85,054,464; layernorm 1536; classifier 768*1000+1000 = 769,000
  // → 86,567,656 (the model card's 86.6M).
  const TensorTree t = tree("google--vit-base-patch16-224.json");
  CHECK(t.class_name() == "ViTForImageClassification");
  CHECK(t.parameter_count() == 86567656);
  check_tensor(t, "vit.embeddings.cls_token", {1, 1, 768});
  check_tensor(t, "vit.embeddings.position_embeddings", {1, 197, 768});
  check_tensor(t, "vit.embeddings.patch_embeddings.projection.weight", {768, 3, 16, 16});
  check_tensor(t, "vit.encoder.layer.0.attention.attention.query.bias", {768});
  check_tensor(t, "classifier.weight", {1000, 768});
  CHECK(t.find_tensor("vit.pooler.dense.weight") < 0);
  CHECK(t.named_buffers().empty());
  CHECK(first_parameter(t) == "vit.embeddings.cls_token");

  // AutoModel → ViTModel with its pooler: 86,567,656 - 769,000 + 590,592 = 86,389,248.
  // _no_split_modules [ViTEmbeddings, ViTLayer]: the largest layer is one ViTLayer,
  // 7,087,872 * 4 bytes.
  const Report compat = report("google--vit-base-patch16-224.json", Mode::kAccelerate);
  CHECK(compat.model_class == "ViTModel");
  CHECK(compat.parameters == 86389248);
  CHECK(compat.rows[0].largest_layer_bytes == 28351488.0);
  CHECK(compat.rows[0].largest_layer == "27.04 MB");
  REQUIRE_FALSE(compat.largest_layer_names.empty());
  CHECK(compat.largest_layer_names[0] == "encoder.layer.0");

  CHECK(error_of(R"({"model_type": "vit", "patch_size": 0})") == ErrorCode::kInvalidValue);
}

TEST_CASE("clip: openai/clip-vit-base-patch32") {
  // Text: 49408*512 + 77*512 = 25,336,320; 12 layers of 3,152,384; final LN 1024
  // → 63,165,952. Vision: class 768 + conv 768*3*32*32 + pos 50*768 = 2,398,464; pre LN 1536;
  // 12 layers of 7,087,872; post LN 1536 → 87,456,000. Projections 768*512 + 512*512;
  // logit_scale 1 → 151,277,313 (openai/clip-vit-base-patch32, "151M").
  const Report compat = report("openai--clip-vit-base-patch32.json", Mode::kAccelerate);
  CHECK(compat.model_class == "CLIPModel");
  CHECK(compat.parameters == 151277313);
  // + position_ids buffers int64 [1, 77] and [1, 50].
  CHECK(compat.rows[0].total_bytes == 151277313.0 * 4 + (77 + 50) * 8);
  // CLIPModel._no_split_modules = [CLIPTextEmbeddings, CLIPEncoderLayer]: the text embeddings
  // are one unit, 25,336,320 * 4 + 77 * 8 bytes.
  REQUIRE_FALSE(compat.largest_layer_names.empty());
  CHECK(compat.largest_layer_names[0] == "text_model.embeddings");
  CHECK(compat.rows[0].largest_layer == "96.65 MB");

  const TensorTree t = tree("openai--clip-vit-base-patch32.json");
  CHECK(t.class_name() == "CLIPModel");
  CHECK(first_parameter(t) == "logit_scale");
  check_tensor(t, "logit_scale", {});
  check_tensor(t, "vision_model.embeddings.patch_embedding.weight", {768, 3, 32, 32});
  CHECK(t.find_tensor("vision_model.embeddings.patch_embedding.bias") < 0);
  check_tensor(t, "vision_model.embeddings.position_ids", {1, 50});
  check_tensor(t, "text_model.embeddings.position_ids", {1, 77});
  check_tensor(t, "text_model.encoder.layers.11.mlp.fc1.weight", {2048, 512});
  check_tensor(t, "visual_projection.weight", {512, 768});
  check_tensor(t, "text_projection.weight", {512, 512});
  CHECK(t.find_tensor("text_projection.bias") < 0);
  // Registration order inside CLIPAttention is k, v, q, out.
  const auto params = t.named_parameters();
  CHECK(t.tensors[params[3]].name == "text_model.encoder.layers.0.self_attn.k_proj.weight");

  CHECK(tree("openai--clip-vit-base-patch32.json", "CLIPTextModel").parameter_count() ==
        63165952);
  const TensorTree vision = tree("openai--clip-vit-base-patch32.json", "CLIPVisionModel");
  CHECK(vision.parameter_count() == 87456000);
  CHECK(vision.no_split_classes == std::vector<std::string>{"CLIPEncoderLayer"});
  CHECK(tree("openai--clip-vit-base-patch32.json", "CLIPVisionModelWithProjection")
            .parameter_count() == 87456000 + 768 * 512);

  // Defaults of CLIPTextConfig / CLIPVisionConfig when the parts are absent: the same ViT-B/32.
  auto defaults = inline_tree(R"({"model_type": "clip"})");
  REQUIRE(defaults.ok());
  CHECK(defaults->parameter_count() == 151277313);
  // A legacy text_config_dict overrides text_config (CLIPConfig's update()).
  auto legacy = inline_tree(R"({"model_type": "clip", "text_config": {"hidden_size": 512},
                                 "text_config_dict": {"num_hidden_layers": 6}})");
  REQUIRE(legacy.ok());
  CHECK(legacy->parameter_count() == 151277313 - 6 * 3152384);

  CHECK(error_of(R"({"model_type": "clip", "text_config": {"num_attention_heads": 7}})") ==
        ErrorCode::kInvalidValue);
  CHECK(error_of(R"({"model_type": "clip", "vision_config": {"hidden_size": 0}})") ==
        ErrorCode::kInvalidValue);
}
