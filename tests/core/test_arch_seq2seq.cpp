// Encoder-decoder and multimodal families: T5, BART, Whisper
// (core/model/arch/{t5,bart,whisper}.cpp) and IDEFICS (core/model/arch/idefics.cpp).
//
// Authorities: the published parameter counts of the real checkpoints (model cards, the Hub's
// safetensors totals), the checkpoints' tensor shapes, and arithmetic from the transformers 4.40
// source written out in comments. The configs under tests/fixtures/configs/ are the Hub's
// config.json files of those models (long generation-only lists such as Whisper's
// suppress_tokens left out).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "memfit/memory/estimate.h"
#include "support/reference.h"

using namespace memfit;

namespace {

std::string cfg(const std::string& stem) { return test::fixture("configs/" + stem + ".json"); }

Report report_of(const std::string& config_text, Mode mode = Mode::kMemfit,
                 const std::string& cls = "") {
  EstimateRequest req;
  req.config_text = config_text;
  req.name = "test";
  req.mode = mode;
  req.class_override = cls;
  auto r = estimate(req);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  return *r;
}

TensorTree tree_of(const std::string& config_text, const std::string& cls = "") {
  EstimateRequest req;
  req.config_text = config_text;
  req.name = "test";
  req.class_override = cls;
  auto t = build_tree(req);
  REQUIRE_MESSAGE(t.ok(), t.error().message());
  return *t;
}

const TensorInfo& tensor(const TensorTree& t, const std::string& name) {
  const int i = t.find_tensor(name);
  REQUIRE_MESSAGE(i >= 0, "no tensor " << name);
  return t.tensors[i];
}

Shape shape_of(const TensorTree& t, const std::string& name) { return tensor(t, name).shape; }

bool has_tensor(const TensorTree& t, const std::string& name) { return t.find_tensor(name) >= 0; }

// True when `name` is an alias of `target` (tied weights, counted once under `target`).
bool tied_to(const TensorTree& t, const std::string& name, const std::string& target) {
  const TensorInfo& a = tensor(t, name);
  return a.is_alias() && t.tensors[a.tied_to].name == target;
}

std::string class_of(const TensorTree& t, const std::string& module) {
  const int i = t.find_module(module);
  REQUIRE_MESSAGE(i >= 0, "no module " << module);
  return t.modules[i].class_name;
}

std::string patched(const std::string& stem, const nlohmann::json& changes) {
  auto j = nlohmann::ordered_json::parse(cfg(stem));
  for (const auto& [k, v] : changes.items()) {
    if (v.is_null()) j.erase(k);
    else j[k] = v;
  }
  return j.dump();
}

ErrorCode error_of(const std::string& config_text) {
  EstimateRequest req;
  req.config_text = config_text;
  req.name = "test";
  auto r = estimate(req);
  REQUIRE_FALSE(r.ok());
  return r.error().code();
}

std::vector<std::string> param_names(const TensorTree& t, std::size_t n) {
  std::vector<std::string> out;
  for (int i : t.named_parameters()) {
    if (out.size() == n) break;
    out.push_back(t.tensors[i].name);
  }
  return out;
}

std::size_t buffer_count(const TensorTree& t) { return t.named_buffers().size(); }

}  // namespace

TEST_CASE("seq2seq: published parameter counts of the architectures[0] class") {
  struct Case {
    const char* stem;
    const char* cls;
    std::uint64_t params;
  };
  const Case cases[] = {
      // t5-small (60.5M): shared 32128*512 + encoder 6*(4*512*512 + 2*512*2048 + 2*512) +
      // 32*8 + 512, decoder 6*(8*512*512 + 2*512*2048 + 3*512) + 32*8 + 512; lm_head tied.
      {"t5-small", "T5ForConditionalGeneration", 60506624ULL},
      {"t5-base", "T5ForConditionalGeneration", 222903552ULL},
      // flan-t5-base (gated-gelu, untied lm_head): the Hub's 247,577,856.
      {"google--flan-t5-base", "T5ForConditionalGeneration", 247577856ULL},
      {"facebook--bart-large", "BartModel", 406291456ULL},
      {"facebook--bart-base", "BartModel", 139420416ULL},
      // bart-large-cnn: bart-large with vocab 50264, one row fewer: 406,291,456 - 1024.
      {"facebook--bart-large-cnn", "BartForConditionalGeneration", 406290432ULL},
      {"openai--whisper-tiny", "WhisperForConditionalGeneration", 37760640ULL},
      {"openai--whisper-large-v3", "WhisperForConditionalGeneration", 1543490560ULL},
      // idefics-9b, published as 9B (8.9B). Derivation in the IDEFICS test case below.
      {"HuggingFaceM4--idefics-9b", "IdeficsForVisionText2Text", 8929679632ULL},
      {"HuggingFaceM4--idefics-80b-instruct", "IdeficsForVisionText2Text", 79967843624ULL},
  };
  for (const auto& c : cases) {
    SUBCASE(c.stem) {
      const Report r = report_of(cfg(c.stem));
      CHECK(r.model_class == c.cls);
      CHECK(r.parameters == c.params);
      CHECK(report_of(cfg(c.stem), Mode::kAccelerate, c.cls).parameters == c.params);
    }
  }
}

TEST_CASE("seq2seq: T5 shared embeddings, relative bias in block 0 only, relu vs gated") {
  const TensorTree t = tree_of(cfg("t5-small"));
  CHECK(t.no_split_classes == std::vector<std::string>{"T5Block"});
  CHECK(shape_of(t, "shared.weight") == Shape{32128, 512});
  CHECK(tied_to(t, "encoder.embed_tokens.weight", "shared.weight"));
  CHECK(tied_to(t, "decoder.embed_tokens.weight", "shared.weight"));
  CHECK(tied_to(t, "lm_head.weight", "shared.weight"));  // tie_word_embeddings default True
  CHECK(shape_of(t, "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight") ==
        Shape{32, 8});
  CHECK(shape_of(t, "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight") ==
        Shape{32, 8});
  CHECK_FALSE(has_tensor(t, "encoder.block.1.layer.0.SelfAttention.relative_attention_bias.weight"));
  CHECK_FALSE(has_tensor(t, "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight"));
  CHECK(class_of(t, "decoder.block.5.layer.1") == "T5LayerCrossAttention");
  CHECK(class_of(t, "decoder.block.5.layer.2.DenseReluDense") == "T5DenseActDense");
  CHECK(shape_of(t, "encoder.block.5.layer.1.DenseReluDense.wi.weight") == Shape{2048, 512});
  CHECK(shape_of(t, "encoder.block.5.layer.1.DenseReluDense.wo.weight") == Shape{512, 2048});
  CHECK_FALSE(has_tensor(t, "encoder.block.0.layer.0.SelfAttention.q.bias"));
  CHECK(shape_of(t, "encoder.final_layer_norm.weight") == Shape{512});
  CHECK_FALSE(has_tensor(t, "encoder.final_layer_norm.bias"));  // T5LayerNorm: weight only
  CHECK(buffer_count(t) == 0);
  CHECK(param_names(t, 6) == std::vector<std::string>{
                                 "shared.weight",
                                 "encoder.block.0.layer.0.SelfAttention.q.weight",
                                 "encoder.block.0.layer.0.SelfAttention.k.weight",
                                 "encoder.block.0.layer.0.SelfAttention.v.weight",
                                 "encoder.block.0.layer.0.SelfAttention.o.weight",
                                 "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"});

  const TensorTree flan = tree_of(cfg("google--flan-t5-base"));
  CHECK(class_of(flan, "encoder.block.0.layer.1.DenseReluDense") == "T5DenseGatedActDense");
  CHECK(shape_of(flan, "encoder.block.0.layer.1.DenseReluDense.wi_0.weight") == Shape{2048, 768});
  CHECK(shape_of(flan, "encoder.block.0.layer.1.DenseReluDense.wi_1.weight") == Shape{2048, 768});
  CHECK_FALSE(has_tensor(flan, "encoder.block.0.layer.1.DenseReluDense.wi.weight"));
  CHECK_FALSE(tensor(flan, "lm_head.weight").is_alias());  // tie_word_embeddings: false

  // T5Model (AutoModel, what accelerate builds) has no lm_head; T5EncoderModel no decoder.
  const Report acc = report_of(cfg("t5-small"), Mode::kAccelerate);
  CHECK(acc.model_class == "T5Model");
  CHECK(acc.parameters == 60506624ULL);  // lm_head was tied: nothing lost
  CHECK(acc.buffers_bytes == 0);
  const TensorTree enc = tree_of(cfg("t5-small"), "T5EncoderModel");
  CHECK_FALSE(has_tensor(enc, "decoder.final_layer_norm.weight"));
  // shared + encoder (see the count above): 16,449,536 + 18,881,280.
  CHECK(enc.parameter_count() == 35330816ULL);
}

TEST_CASE("seq2seq: mT5 is T5's modules under MT5* names, with MT5Config's defaults") {
  // MT5Config(): mt5-small's shape (vocab 250112, d_model 512, d_ff 1024, 6 heads, 8 layers,
  // gated-gelu, untied lm_head). shared and lm_head 2·250112·512; encoder 8·(4·512·384 + 2·512
  // + 2·512·1024 + 1024·512) + 32·6 + 512; decoder 8·(8·512·384 + 3·512 + 3·512·1024) + 32·6 + 512
  // = 300,176,768, mt5-small's published count.
  const TensorTree small = tree_of(R"({"model_type": "mt5", "architectures": ["MT5ForConditionalGeneration"]})");
  CHECK(small.parameter_count() == 300176768ULL);
  CHECK(small.no_split_classes == std::vector<std::string>{"MT5Block"});
  CHECK(class_of(small, "encoder.block.0.layer.1.DenseReluDense") == "MT5DenseGatedActDense");
  CHECK(class_of(small, "decoder.final_layer_norm") == "MT5LayerNorm");
  CHECK_FALSE(tied_to(small, "lm_head.weight", "shared.weight"));
  // mt5-base is flan-t5-base's shape with mT5's vocabulary: 247,577,856 + 2·(250112 − 32128)·768
  // = 582,401,280, its published count.
  const std::string base = patched("google--flan-t5-base", {{"model_type", "mt5"},
                                                            {"architectures", {"MT5ForConditionalGeneration"}},
                                                            {"vocab_size", 250112}});
  CHECK(report_of(base).parameters == 582401280ULL);
  CHECK(report_of(base).model_class == "MT5ForConditionalGeneration");
}

TEST_CASE("seq2seq: T5 config errors") {
  CHECK(error_of(patched("t5-small", {{"d_model", 0}})) == ErrorCode::kInvalidValue);
  // configuration_t5.py raises ValueError for anything but '<act>' / 'gated-<act>'.
  CHECK(error_of(patched("t5-small", {{"feed_forward_proj", "gated-gelu-new"}})) ==
        ErrorCode::kInvalidValue);
  CHECK(error_of(patched("t5-small", {{"feed_forward_proj", "fast-gelu"}})) ==
        ErrorCode::kInvalidValue);
  CHECK(error_of(patched("t5-small", {{"num_heads", "eight"}})) == ErrorCode::kWrongType);
  // num_decoder_layers defaults to num_layers; an explicit value is honoured.
  const TensorTree t = tree_of(patched("t5-small", {{"num_decoder_layers", 2}}));
  CHECK(has_tensor(t, "decoder.block.1.layer.0.SelfAttention.q.weight"));
  CHECK_FALSE(has_tensor(t, "decoder.block.2.layer.0.SelfAttention.q.weight"));
  CHECK(has_tensor(t, "encoder.block.5.layer.0.SelfAttention.q.weight"));
}

TEST_CASE("seq2seq: BART tied embeddings, offset positions, final_logits_bias") {
  const TensorTree t = tree_of(cfg("facebook--bart-large"), "BartForConditionalGeneration");
  CHECK(t.no_split_classes == std::vector<std::string>{"BartEncoderLayer", "BartDecoderLayer"});
  CHECK(shape_of(t, "model.shared.weight") == Shape{50265, 1024});
  CHECK(tied_to(t, "model.encoder.embed_tokens.weight", "model.shared.weight"));
  CHECK(tied_to(t, "model.decoder.embed_tokens.weight", "model.shared.weight"));
  CHECK(tied_to(t, "lm_head.weight", "model.shared.weight"));
  // BartLearnedPositionalEmbedding: max_position_embeddings + 2 rows.
  CHECK(shape_of(t, "model.encoder.embed_positions.weight") == Shape{1026, 1024});
  CHECK(class_of(t, "model.decoder.embed_positions") == "BartLearnedPositionalEmbedding");
  CHECK(shape_of(t, "model.decoder.layers.11.encoder_attn.k_proj.bias") == Shape{1024});
  CHECK(shape_of(t, "model.encoder.layers.0.fc1.weight") == Shape{4096, 1024});
  CHECK(shape_of(t, "model.encoder.layernorm_embedding.bias") == Shape{1024});
  const TensorInfo& bias = tensor(t, "final_logits_bias");
  CHECK(bias.kind == TensorKind::kBuffer);
  CHECK(bias.persistent);
  CHECK(bias.shape == Shape{1, 50265});
  CHECK(t.parameter_count() == 406291456ULL);
  // BartAttention registers k, v, q, out in that order.
  CHECK(param_names(t, 4) == std::vector<std::string>{
                                 "model.shared.weight",
                                 "model.encoder.embed_positions.weight",
                                 "model.encoder.layers.0.self_attn.k_proj.weight",
                                 "model.encoder.layers.0.self_attn.k_proj.bias"});
  // The buffer is counted in both modes: 50265 float32.
  const Report r = report_of(cfg("facebook--bart-large-cnn"));
  CHECK(r.buffers_bytes == 50264 * 4);
  const Report acc = report_of(cfg("facebook--bart-large-cnn"), Mode::kAccelerate);
  CHECK(acc.model_class == "BartModel");
  CHECK(acc.buffers_bytes == 0);
}

TEST_CASE("seq2seq: BART sequence classification head and config errors") {
  // bart-large's id2label has 3 entries (BartConfig's default num_labels is 3 as well).
  const TensorTree t = tree_of(cfg("facebook--bart-large"), "BartForSequenceClassification");
  CHECK(shape_of(t, "classification_head.dense.weight") == Shape{1024, 1024});
  CHECK(shape_of(t, "classification_head.out_proj.weight") == Shape{3, 1024});
  CHECK(shape_of(t, "classification_head.out_proj.bias") == Shape{3});
  CHECK_FALSE(has_tensor(t, "lm_head.weight"));
  CHECK(t.parameter_count() == 406291456ULL + 1024 * 1024 + 1024 + 3 * 1024 + 3);
  const TensorTree no_labels = tree_of(
      patched("facebook--bart-large", {{"id2label", nullptr}, {"label2id", nullptr}}),
      "BartForSequenceClassification");
  CHECK(shape_of(no_labels, "classification_head.out_proj.weight") == Shape{3, 1024});

  CHECK(error_of(patched("facebook--bart-large", {{"encoder_ffn_dim", 0}})) ==
        ErrorCode::kInvalidValue);
  // 1024 is not divisible by 12 heads: BartAttention raises.
  CHECK(error_of(patched("facebook--bart-large", {{"decoder_attention_heads", 12}})) ==
        ErrorCode::kInvalidValue);
}

TEST_CASE("seq2seq: Whisper convolutions, frozen sinusoidal positions, tied proj_out") {
  const TensorTree t = tree_of(cfg("openai--whisper-tiny"));
  CHECK(t.no_split_classes ==
        std::vector<std::string>{"WhisperEncoderLayer", "WhisperDecoderLayer"});
  CHECK(shape_of(t, "model.encoder.conv1.weight") == Shape{384, 80, 3});
  CHECK(shape_of(t, "model.encoder.conv2.weight") == Shape{384, 384, 3});
  CHECK(shape_of(t, "model.encoder.conv2.bias") == Shape{384});
  // requires_grad=False, but a parameter all the same (in the checkpoint too).
  CHECK(tensor(t, "model.encoder.embed_positions.weight").kind == TensorKind::kParameter);
  CHECK(shape_of(t, "model.encoder.embed_positions.weight") == Shape{1500, 384});
  CHECK(shape_of(t, "model.decoder.embed_positions.weight") == Shape{448, 384});
  CHECK(class_of(t, "model.decoder.embed_positions") == "WhisperPositionalEmbedding");
  CHECK(shape_of(t, "model.decoder.embed_tokens.weight") == Shape{51865, 384});
  CHECK(tied_to(t, "proj_out.weight", "model.decoder.embed_tokens.weight"));
  // WhisperAttention: k_proj has no bias.
  CHECK_FALSE(has_tensor(t, "model.encoder.layers.0.self_attn.k_proj.bias"));
  CHECK(has_tensor(t, "model.decoder.layers.3.encoder_attn.v_proj.bias"));
  CHECK_FALSE(has_tensor(t, "model.decoder.layers.3.encoder_attn.k_proj.bias"));
  CHECK(buffer_count(t) == 0);

  const TensorTree v3 = tree_of(cfg("openai--whisper-large-v3"));
  CHECK(shape_of(v3, "model.encoder.conv1.weight") == Shape{1280, 128, 3});
  CHECK(shape_of(v3, "proj_out.weight") == Shape{51866, 1280});

  const Report acc = report_of(cfg("openai--whisper-tiny"), Mode::kAccelerate);
  CHECK(acc.model_class == "WhisperModel");
  CHECK(acc.parameters == 37760640ULL);

  // WhisperForAudioClassification: encoder + projector (classifier_proj_size 256) + classifier.
  const TensorTree cls = tree_of(
      patched("openai--whisper-tiny", {{"num_labels", 5}, {"use_weighted_layer_sum", true}}),
      "WhisperForAudioClassification");
  CHECK(shape_of(cls, "layer_weights") == Shape{5});  // encoder_layers + 1
  CHECK(param_names(cls, 1) == std::vector<std::string>{"layer_weights"});
  CHECK(shape_of(cls, "projector.weight") == Shape{256, 384});
  CHECK(shape_of(cls, "classifier.weight") == Shape{5, 256});
  CHECK_FALSE(has_tensor(cls, "model.decoder.layer_norm.weight"));
  // Encoder of whisper-tiny: 8,208,384 (see the published total's breakdown) + heads.
  CHECK(cls.parameter_count() == 8208384ULL + 5 + 384 * 256 + 256 + 256 * 5 + 5);

  CHECK(error_of(patched("openai--whisper-tiny", {{"num_mel_bins", 0}})) ==
        ErrorCode::kInvalidValue);
  CHECK(error_of(patched("openai--whisper-tiny", {{"encoder_attention_heads", 5}})) ==
        ErrorCode::kInvalidValue);
}

// IDEFICS-80B (LLaMA-65B + CLIP ViT-H/14 + perceiver), from modeling_idefics.py / vision.py /
// perceiver.py of 4.40:
//   embed_tokens 32000*8192 + additional 2*8192                        =    262,160,384
//   80 decoder layers * (4*8192^2 + 3*8192*22016 + 2*8192)             = 64,761,364,480
//   20 gated cross layers * (2*8192^2 + 2*1280*8192 + 3*8192*22016
//                            + 2*128 qk norms + 2*8192 + 2 alphas)      = 13,925,422,120
//   norm 8192
//   vision: 1280 + 1280*3*14*14 + 257*1280 + 2*2*1280
//           + 32*(4*(1280^2+1280) + 2*2*1280 + 1280*5120+5120 + 5120*1280+1280) = 630,766,080
//   perceiver: 64*1280 + 6*(2*2*1280 + 2*2*96 + 3*1280*1536 + 1536*1280
//              + 2*1280 + 2*1280*5120) + 2*1280                        =    125,961,984
//   IdeficsModel                                                       = 79,705,683,240
//   lm_head 32000*8192 + additional_fc 2*8192 (untied)                 =    262,160,384
//   IdeficsForVisionText2Text                                          = 79,967,843,624 (80B)
// idefics-9b the same way with LLaMA-7B (4096 / 11008 / 32 layers, 8 cross layers) gives
// 8,929,679,632 (published: 9B).
TEST_CASE("seq2seq: IDEFICS-80B-instruct tree, compat-mode buffers and accelerate figures") {
  const std::string text = cfg("HuggingFaceM4--idefics-80b-instruct");
  const TensorTree t = tree_of(text);
  CHECK(t.class_name() == "IdeficsForVisionText2Text");
  CHECK(t.no_split_classes ==
        std::vector<std::string>{"IdeficsDecoderLayer", "IdeficsGatedCrossAttentionLayer"});
  CHECK(class_of(t, "model.embed_tokens") == "IdeficsDecoupledEmbedding");
  CHECK(shape_of(t, "model.embed_tokens.weight") == Shape{32000, 8192});
  CHECK(shape_of(t, "model.embed_tokens.additional_embedding.weight") == Shape{2, 8192});
  CHECK(class_of(t, "lm_head") == "IdeficsDecoupledLinear");
  CHECK_FALSE(tensor(t, "lm_head.weight").is_alias());
  CHECK(shape_of(t, "lm_head.additional_fc.weight") == Shape{2, 8192});
  CHECK_FALSE(has_tensor(t, "lm_head.bias"));
  // Vision tower (CLIP ViT-H/14 at 224 px: 16*16 patches + class token).
  CHECK(shape_of(t, "model.vision_model.embeddings.class_embedding") == Shape{1280});
  CHECK(shape_of(t, "model.vision_model.embeddings.patch_embedding.weight") ==
        Shape{1280, 3, 14, 14});
  CHECK_FALSE(has_tensor(t, "model.vision_model.embeddings.patch_embedding.bias"));
  CHECK(shape_of(t, "model.vision_model.embeddings.position_embedding.weight") ==
        Shape{257, 1280});
  const TensorInfo& pos = tensor(t, "model.vision_model.embeddings.position_ids");
  CHECK(pos.kind == TensorKind::kBuffer);
  CHECK(pos.dtype == DType::kI64);
  CHECK_FALSE(pos.persistent);
  CHECK(pos.shape == Shape{1, 257});
  CHECK(shape_of(t, "model.vision_model.encoder.layers.31.mlp.fc1.weight") == Shape{5120, 1280});
  CHECK(has_tensor(t, "model.vision_model.pre_layrnorm.weight"));  // sic
  // Perceiver resampler.
  CHECK(shape_of(t, "model.perceiver_resampler.latents") == Shape{64, 1280});
  CHECK(shape_of(t, "model.perceiver_resampler.blocks.5.0.q_proj.weight") == Shape{1536, 1280});
  CHECK(shape_of(t, "model.perceiver_resampler.blocks.5.0.output_proj.weight") ==
        Shape{1280, 1536});
  CHECK(shape_of(t, "model.perceiver_resampler.blocks.0.0.q_layer_norm.bias") == Shape{96});
  CHECK(shape_of(t, "model.perceiver_resampler.blocks.0.1.fc.weight") == Shape{5120, 1280});
  CHECK(class_of(t, "model.perceiver_resampler.blocks.0.1") == "IdeficsMLP");
  // Decoder and gated cross-attention (every 4th layer: 20 of them).
  CHECK(shape_of(t, "model.layers.79.mlp.gate_proj.weight") == Shape{22016, 8192});
  CHECK_FALSE(has_tensor(t, "model.layers.0.self_attn.q_layer_norm.weight"));
  CHECK(has_tensor(t, "model.gated_cross_attn_layers.19.cross_attn.q_proj.weight"));
  CHECK_FALSE(has_tensor(t, "model.gated_cross_attn_layers.20.cross_attn.q_proj.weight"));
  CHECK(shape_of(t, "model.gated_cross_attn_layers.0.cross_attn.k_proj.weight") ==
        Shape{8192, 1280});
  CHECK(shape_of(t, "model.gated_cross_attn_layers.0.cross_attn.q_layer_norm.weight") ==
        Shape{128});
  CHECK(shape_of(t, "model.gated_cross_attn_layers.0.alpha_cross_attn") == Shape{1});
  // The alphas are direct parameters of the layer: first in its named_parameters.
  const auto names = param_names(t, 1000000);
  const auto at = [&](const std::string& n) {
    return std::find(names.begin(), names.end(), n) - names.begin();
  };
  CHECK(at("model.gated_cross_attn_layers.0.alpha_cross_attn") + 1 ==
        at("model.gated_cross_attn_layers.0.alpha_dense"));
  CHECK(at("model.gated_cross_attn_layers.0.alpha_dense") + 1 ==
        at("model.gated_cross_attn_layers.0.cross_attn.q_proj.weight"));
  // Rotary caches on every attention, cross-attention included, at IdeficsEmbedding's default
  // 2048 positions.
  CHECK(shape_of(t, "model.layers.0.self_attn.rotary_emb.inv_freq") == Shape{64});
  CHECK(shape_of(t, "model.layers.0.self_attn.rotary_emb.cos_cached") == Shape{2048, 128});
  CHECK(shape_of(t, "model.gated_cross_attn_layers.7.cross_attn.rotary_emb.sin_cached") ==
        Shape{2048, 128});

  // accelerate 0.30.1 (no auto_map) builds IdeficsModel.
  const Report acc = report_of(text, Mode::kAccelerate);
  CHECK(acc.model_class == "IdeficsModel");
  CHECK(acc.parameters == 79705683240ULL);
  // Buffers: 100 attentions * (64 + 2*2048*128) float32 + position_ids 257 int64.
  const double buffers = 100 * (64 + 2 * 2048.0 * 128) * 4 + 257 * 8;
  CHECK(acc.buffers_bytes == buffers);
  REQUIRE(acc.rows.size() == 4);
  CHECK(acc.rows[0].dtype == "float32");
  CHECK(acc.rows[0].total_bytes == 79705683240.0 * 4 + buffers);
  // Largest layer: an IdeficsDecoderLayer (no-split), 809,517,056 params + its rotary buffers.
  CHECK(acc.rows[0].largest_layer_bytes == 809517056.0 * 4 + (64 + 2 * 2048.0 * 128) * 4);
  CHECK(acc.largest_layer_names.front() == "layers.0");
  // The rotary caches are still registered per attention by current transformers.
  CHECK(report_of(text, Mode::kMemfit, "IdeficsModel").buffers_bytes == buffers);
}

TEST_CASE("seq2seq: IDEFICS defaults, tying and config errors") {
  // No vision/perceiver config: IdeficsVisionConfig() defaults (768 wide, 32 layers, 224/14).
  const TensorTree t = tree_of(
      patched("HuggingFaceM4--idefics-9b",
              {{"vision_config", nullptr}, {"perceiver_config", nullptr}, {"use_resampler", nullptr},
               {"tie_word_embeddings", true}, {"alpha_type", "vector"}}));
  CHECK(shape_of(t, "model.vision_model.embeddings.class_embedding") == Shape{768});
  CHECK(shape_of(t, "model.vision_model.encoder.layers.31.mlp.fc1.weight") == Shape{5120, 768});
  CHECK(shape_of(t, "model.gated_cross_attn_layers.0.cross_attn.v_proj.weight") ==
        Shape{4096, 768});
  CHECK_FALSE(has_tensor(t, "model.perceiver_resampler.latents"));  // use_resampler False
  CHECK(shape_of(t, "model.gated_cross_attn_layers.0.alpha_dense") == Shape{1, 1, 4096});
  CHECK(tied_to(t, "lm_head.weight", "model.embed_tokens.weight"));
  CHECK(tied_to(t, "lm_head.additional_fc.weight",
                "model.embed_tokens.additional_embedding.weight"));

  const std::string base = "HuggingFaceM4--idefics-80b-instruct";
  CHECK(error_of(patched(base, {{"alpha_type", "matrix"}})) == ErrorCode::kInvalidValue);
  CHECK(error_of(patched(base, {{"cross_layer_interval", 0}})) == ErrorCode::kInvalidValue);
  CHECK(error_of(patched(base, {{"num_attention_heads", 60}})) == ErrorCode::kInvalidValue);
  CHECK(error_of(patched(base, {{"vision_config", "clip"}})) == ErrorCode::kWrongType);
}
