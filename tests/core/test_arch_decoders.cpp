// Decoder-only families of the GPT-2 generation: gpt_bigcode, gpt_neox, gptj, opt, bloom,
// falcon, phi, stablelm.
//
// Authorities: the published parameter counts of the checkpoints (model cards / papers / the
// Hub's totals) where they exist, otherwise hand arithmetic from the transformers 4.40 modeling
// files, written out next to each figure. Fixtures are the public config.json files of the
// checkpoints (tests/fixtures/configs/<org>--<name>.json).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "memfit/memory/estimate.h"
#include "support/reference.h"

namespace {

using memfit::BufferEra;
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

TensorTree inline_tree(const std::string& json, const std::string& cls = "") {
  EstimateRequest req;
  req.config_text = json;
  req.name = "inline";
  req.library = "transformers";
  req.class_override = cls;
  auto r = memfit::build_tree(req);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message()));
  return r.value();
}

Report report(const std::string& fixture, Mode mode, const std::string& cls = "") {
  auto r = memfit::estimate(request(fixture, mode, cls));
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message()));
  return r.value();
}

ErrorCode error_of(const std::string& json) {
  EstimateRequest req;
  req.config_text = json;
  req.name = "inline";
  req.library = "transformers";
  auto r = memfit::build_tree(req);
  REQUIRE_FALSE(r.ok());
  return r.error().code();
}

void check_tensor(const TensorTree& t, const std::string& name, const memfit::Shape& shape) {
  const int i = t.find_tensor(name);
  REQUIRE_MESSAGE(i >= 0, name);
  CHECK_MESSAGE(t.tensors[i].shape == shape, name);
}

void check_absent(const TensorTree& t, const std::string& name) {
  CHECK_MESSAGE(t.find_tensor(name) < 0, name);
}

void check_tied(const TensorTree& t, const std::string& alias, const std::string& target) {
  const int a = t.find_tensor(alias);
  const int b = t.find_tensor(target);
  REQUIRE_MESSAGE(a >= 0, alias);
  REQUIRE_MESSAGE(b >= 0, target);
  CHECK_MESSAGE(t.tensors[a].tied_to == b, alias);
  CHECK_FALSE(t.tensors[b].is_alias());
}

void check_buffer(const TensorTree& t, const std::string& name, const memfit::Shape& shape,
                  DType dtype, BufferEra era) {
  const int i = t.find_tensor(name);
  REQUIRE_MESSAGE(i >= 0, name);
  CHECK_MESSAGE(t.tensors[i].kind == memfit::TensorKind::kBuffer, name);
  CHECK_MESSAGE(t.tensors[i].shape == shape, name);
  CHECK_MESSAGE(t.tensors[i].dtype == dtype, name);
  CHECK_MESSAGE(t.tensors[i].era == era, name);
  CHECK_FALSE_MESSAGE(t.tensors[i].persistent, name);
}

int count_buffers(const TensorTree& t, BufferEra era) {
  int n = 0;
  for (int i : t.named_buffers()) n += t.tensors[i].era == era ? 1 : 0;
  return n;
}

// The first parameter registered under `prefix.` (registration order).
std::string first_parameter_under(const TensorTree& t, const std::string& prefix) {
  for (int i : t.named_parameters())
    if (t.tensors[i].name.rfind(prefix + ".", 0) == 0) return t.tensors[i].name;
  return "";
}

}  // namespace

// ---------------------------------------------------------------------------------- gpt_neox

TEST_CASE("gpt_neox: EleutherAI/pythia-160m") {
  const TensorTree t = tree("EleutherAI--pythia-160m.json");
  CHECK(t.class_name() == "GPTNeoXForCausalLM");
  // The Pythia paper / model card count: 162,322,944. By hand: embed_in and the untied
  // embed_out 50304*768 each; 12 layers of 2 LayerNorms 4*768, query_key_value 768*2304+2304,
  // dense 768*768+768, dense_h_to_4h 768*3072+3072, dense_4h_to_h 3072*768+768 (7,087,872);
  // final_layer_norm 1536.
  CHECK(t.parameter_count() == 162322944);
  check_tensor(t, "gpt_neox.embed_in.weight", {50304, 768});
  check_tensor(t, "gpt_neox.layers.0.attention.query_key_value.weight", {2304, 768});
  check_tensor(t, "gpt_neox.layers.11.attention.dense.bias", {768});
  check_tensor(t, "gpt_neox.layers.0.mlp.dense_h_to_4h.weight", {3072, 768});
  check_tensor(t, "gpt_neox.final_layer_norm.weight", {768});
  check_tensor(t, "embed_out.weight", {50304, 768});
  CHECK_FALSE(t.tensors[t.find_tensor("embed_out.weight")].is_alias());
  CHECK(first_parameter_under(t, "gpt_neox.layers.0") ==
        "gpt_neox.layers.0.input_layernorm.weight");
  CHECK(t.no_split_classes == std::vector<std::string>{"GPTNeoXLayer"});

  // 4.40 buffers per attention: bias bool [1,1,2048,2048], masked_bias f32 scalar, rotary over
  // int(64 * 0.25) = 16 dims: inv_freq [8], cos/sin_cached [2048, 16]. Current: one inv_freq.
  check_buffer(t, "gpt_neox.layers.3.attention.bias", {1, 1, 2048, 2048}, DType::kBool,
               BufferEra::kLegacyOnly);
  check_buffer(t, "gpt_neox.layers.3.attention.masked_bias", {}, DType::kF32,
               BufferEra::kLegacyOnly);
  check_buffer(t, "gpt_neox.layers.3.attention.rotary_emb.inv_freq", {8}, DType::kF32,
               BufferEra::kLegacyOnly);
  check_buffer(t, "gpt_neox.layers.3.attention.rotary_emb.cos_cached", {2048, 16}, DType::kF32,
               BufferEra::kLegacyOnly);
  check_buffer(t, "gpt_neox.rotary_emb.inv_freq", {8}, DType::kF32, BufferEra::kCurrentOnly);
  CHECK(count_buffers(t, BufferEra::kLegacyOnly) == 12 * 5);
  CHECK(count_buffers(t, BufferEra::kCurrentOnly) == 1);
}

TEST_CASE("gpt_neox: pythia-160m as accelerate builds it (GPTNeoXModel, compat buffers)") {
  const Report r = report("EleutherAI--pythia-160m.json", Mode::kAccelerate);
  CHECK(r.model_class == "GPTNeoXModel");
  CHECK(r.parameters == 162322944 - 50304 * 768);
  // Buffers per layer in accelerate's sizes: bool mask 2048*2048/8 = 524,288 bytes, masked_bias
  // 4, inv_freq 32, cos+sin 2*2048*16*4 = 262,144 → 786,468; 12 layers → 9,437,616.
  CHECK(r.buffers_bytes == 9437616.0);
  CHECK(r.rows[0].total_bytes == 123689472.0 * 4 + 9437616.0);
  CHECK(r.rows[0].total == "480.84 MB");
  // embed_in (154,533,888 bytes) beats a GPTNeoXLayer (29,137,956 with its buffers).
  REQUIRE_FALSE(r.largest_layer_names.empty());
  CHECK(r.largest_layer_names[0] == "embed_in");
  CHECK(r.rows[0].largest_layer_bytes == 154533888.0);

  // Default mode: only the current model-level inv_freq [8] (32 bytes).
  const Report now = report("EleutherAI--pythia-160m.json", Mode::kMemfit, "GPTNeoXModel");
  CHECK(now.buffers_bytes == 32.0);
}

TEST_CASE("gpt_neox: EleutherAI/pythia-1b and the other heads") {
  const TensorTree t = tree("EleutherAI--pythia-1b.json");
  // Model card: 1,011,781,632 parameters. By hand: 2*50304*2048 + 16*50,358,272 + 4096.
  CHECK(t.parameter_count() == 1011781632);
  // head size 256 → int(256 * 0.25) = 64 rotary dims.
  check_buffer(t, "gpt_neox.layers.0.attention.rotary_emb.sin_cached", {2048, 64}, DType::kF32,
               BufferEra::kLegacyOnly);
  check_buffer(t, "gpt_neox.layers.0.attention.rotary_emb.inv_freq", {32}, DType::kF32,
               BufferEra::kLegacyOnly);

  const TensorTree base = tree("EleutherAI--pythia-160m.json", "GPTNeoXModel");
  const std::uint64_t body = 162322944 - 50304 * 768;
  CHECK(base.parameter_count() == body);
  CHECK(first_parameter_under(base, "layers.0") == "layers.0.input_layernorm.weight");
  CHECK(tree("EleutherAI--pythia-160m.json", "GPTNeoXForSequenceClassification")
            .parameter_count() == body + 768 * 2);
  CHECK(tree("EleutherAI--pythia-160m.json", "GPTNeoXForTokenClassification")
            .parameter_count() == body + 768 * 2 + 2);
  CHECK(tree("EleutherAI--pythia-160m.json", "GPTNeoXForQuestionAnswering").parameter_count() ==
        body + 768 * 2 + 2);

  // attention_bias=false drops the two linear biases of every attention (2304 + 768).
  const TensorTree nobias = inline_tree(
      R"({"model_type": "gpt_neox", "vocab_size": 100, "hidden_size": 64,
          "num_hidden_layers": 1, "num_attention_heads": 4, "intermediate_size": 256,
          "attention_bias": false, "max_position_embeddings": 32})",
      "GPTNeoXModel");
  // embed 6400 + LN 256 + qkv 64*192 + dense 64*64 + mlp 64*256+256 + 256*64+64 + final 128.
  CHECK(nobias.parameter_count() == 6400 + 256 + 12288 + 4096 + 16640 + 16448 + 128);
  check_absent(nobias, "layers.0.attention.query_key_value.bias");
  // head size 16 → int(16 * 0.25) = 4 rotary dims; max_position_embeddings 32.
  check_buffer(nobias, "layers.0.attention.rotary_emb.cos_cached", {32, 4}, DType::kF32,
               BufferEra::kLegacyOnly);
}

// ------------------------------------------------------------------------------- gpt_bigcode

TEST_CASE("gpt_bigcode: bigcode/starcoderbase-1b") {
  const TensorTree t = tree("bigcode--starcoderbase-1b.json");
  CHECK(t.class_name() == "GPTBigCodeForCausalLM");
  // By hand (the Hub lists ~1.14B): wte 49152*2048 = 100,663,296; wpe 8192*2048 = 16,777,216;
  // 24 blocks of ln_1 4096, c_attn 2048*(2048+2*128)+2304 (multi-query: one k/v head of 128),
  // c_proj 2048*2048+2048, ln_2 4096, c_fc 2048*8192+8192, c_proj 8192*2048+2048
  // (42,490,112 each); ln_f 4096; lm_head tied to wte → 1,137,207,296.
  CHECK(t.parameter_count() == 1137207296);
  check_tensor(t, "transformer.h.0.attn.c_attn.weight", {2304, 2048});
  check_tensor(t, "transformer.h.0.attn.c_attn.bias", {2304});
  check_tensor(t, "transformer.h.23.mlp.c_fc.weight", {8192, 2048});
  check_tensor(t, "transformer.wpe.weight", {8192, 2048});
  check_tied(t, "lm_head.weight", "transformer.wte.weight");
  CHECK(t.no_split_classes == std::vector<std::string>{"GPTBigCodeBlock"});
  // One model-level bool causal mask [8192, 8192], registered by 4.40 and by current code.
  check_buffer(t, "transformer.bias", {8192, 8192}, DType::kBool, BufferEra::kAlways);
  CHECK(t.named_buffers().size() == 1);

  const Report compat = report("bigcode--starcoderbase-1b.json", Mode::kAccelerate);
  CHECK(compat.model_class == "GPTBigCodeModel");
  CHECK(compat.buffers_bytes == 8192.0 * 8192 / 8);  // accelerate's 1/8 byte per bool
  CHECK(compat.rows[0].total_bytes == (1137207296.0 * 4) + 8388608.0);
  const Report now = report("bigcode--starcoderbase-1b.json", Mode::kMemfit);
  CHECK(now.buffers_bytes == 8192.0 * 8192);  // a real torch.bool is one byte

  // multi_query=false: c_attn is a plain 3*hidden projection.
  const TensorTree mha = inline_tree(
      R"({"model_type": "gpt_bigcode", "n_embd": 64, "n_head": 4, "n_layer": 1,
          "n_positions": 16, "vocab_size": 10, "multi_query": false})");
  check_tensor(mha, "h.0.attn.c_attn.weight", {192, 64});
  CHECK(tree("bigcode--starcoderbase-1b.json", "GPTBigCodeForSequenceClassification")
            .parameter_count() == 1137207296 + 2048 * 2);
}

// ------------------------------------------------------------------------------------- gptj

TEST_CASE("gpt_neo: gpt-neo-125M's config, global and local layers") {
  // EleutherAI/gpt-neo-125M: wte 50257·768 + wpe 2048·768; 12 layers of 7,085,568 (two
  // LayerNorms, q/k/v 3·768² without bias, out_proj 768² + 768, c_fc/c_proj 768↔3072); ln_f;
  // lm_head tied — 125,198,592, its published count.
  const char* kNeo = R"({"model_type": "gpt_neo", "architectures": ["GPTNeoForCausalLM"], "hidden_size": 768,
    "num_layers": 12, "num_heads": 12, "attention_types": [[["global", "local"], 6]], "max_position_embeddings": 2048,
    "vocab_size": 50257, "window_size": 256, "intermediate_size": null})";
  const TensorTree t = inline_tree(kNeo);
  CHECK(t.parameter_count() == 125198592ULL);
  check_tensor(t, "transformer.h.11.attn.attention.q_proj.weight", {768, 768});
  check_absent(t, "transformer.h.11.attn.attention.q_proj.bias");
  check_tensor(t, "transformer.h.11.attn.attention.out_proj.bias", {768});
  CHECK(first_parameter_under(t, "transformer.h.0.attn") == "transformer.h.0.attn.attention.k_proj.weight");
  CHECK(t.no_split_classes == std::vector<std::string>{"GPTNeoBlock"});
  // Each layer's causal mask (bool) and masked_bias, in both eras.
  check_buffer(t, "transformer.h.1.attn.attention.bias", {1, 1, 2048, 2048}, DType::kBool, BufferEra::kAlways);
  check_buffer(t, "transformer.h.1.attn.attention.masked_bias", {}, DType::kF32, BufferEra::kAlways);
  // attention_types must expand to num_layers kinds, of 'global' and 'local' only.
  std::string wrong = kNeo;
  wrong.replace(wrong.find("6]]"), 1, "5");
  CHECK((error_of(wrong) == ErrorCode::kInvalidValue));
  std::string unknown = kNeo;
  unknown.replace(unknown.find("\"local\""), 7, "\"sparse\"");
  CHECK((error_of(unknown) == ErrorCode::kInvalidValue));
}

TEST_CASE("gptj: EleutherAI/gpt-j-6b") {
  const TensorTree t = tree("EleutherAI--gpt-j-6b.json");
  CHECK(t.class_name() == "GPTJForCausalLM");
  // From modeling_gptj.py: wte 50400*4096 = 206,438,400; 28 blocks of ln_1 8192, q/k/v/out
  // 4*4096*4096 (no biases), fc_in 4096*16384+16384, fc_out 16384*4096+4096 (201,355,264 each);
  // ln_f 8192; untied lm_head 50400*4096+50400 → 6,050,882,784. (The model card's
  // n_parameters is 6,053,381,344: 2,498,560 = 610*4096 more, which no tensor of the
  // transformers checkpoint accounts for.)
  CHECK(t.parameter_count() == 6050882784ULL);
  check_tensor(t, "transformer.h.0.attn.q_proj.weight", {4096, 4096});
  check_absent(t, "transformer.h.0.attn.q_proj.bias");
  check_tensor(t, "transformer.h.27.mlp.fc_in.weight", {16384, 4096});
  check_tensor(t, "lm_head.weight", {50400, 4096});
  check_tensor(t, "lm_head.bias", {50400});
  CHECK(first_parameter_under(t, "transformer.h.0.attn") == "transformer.h.0.attn.k_proj.weight");
  CHECK(t.no_split_classes == std::vector<std::string>{"GPTJBlock"});
  // 4.40: bias + masked_bias per attention; embed_positions is a plain attribute there, a
  // buffer [2048, rotary_dim 64] in current transformers.
  check_buffer(t, "transformer.h.5.attn.bias", {1, 1, 2048, 2048}, DType::kBool,
               BufferEra::kLegacyOnly);
  check_buffer(t, "transformer.h.5.attn.masked_bias", {}, DType::kF32, BufferEra::kLegacyOnly);
  check_buffer(t, "transformer.h.5.attn.embed_positions", {2048, 64}, DType::kF32,
               BufferEra::kCurrentOnly);

  const Report compat = report("EleutherAI--gpt-j-6b.json", Mode::kAccelerate);
  CHECK(compat.model_class == "GPTJModel");
  CHECK(compat.parameters == 6050882784ULL - 206488800);
  CHECK(compat.buffers_bytes == 28 * (524288.0 + 4));
  const Report now = report("EleutherAI--gpt-j-6b.json", Mode::kMemfit);
  CHECK(now.buffers_bytes == 28 * 2048 * 64 * 4.0);

  CHECK(tree("EleutherAI--gpt-j-6b.json", "GPTJForSequenceClassification").parameter_count() ==
        6050882784ULL - 206488800 + 4096 * 2);
  // rotary_dim null: positions over the whole embedding.
  const TensorTree full = inline_tree(
      R"({"model_type": "gptj", "n_embd": 64, "n_head": 4, "n_layer": 1, "n_positions": 16,
          "vocab_size": 10, "rotary_dim": null})");
  check_buffer(full, "h.0.attn.embed_positions", {16, 64}, DType::kF32, BufferEra::kCurrentOnly);
}

// -------------------------------------------------------------------------------------- opt

TEST_CASE("opt: facebook/opt-125m") {
  const TensorTree t = tree("facebook--opt-125m.json");
  CHECK(t.class_name() == "OPTForCausalLM");
  // 125,239,296 (the OPT-125m count): embed_tokens 50272*768; positions (2048+2)*768; 12 layers
  // of 4*(768*768+768) + 2 LN 3072 + fc1 768*3072+3072 + fc2 3072*768+768 (7,087,872);
  // final_layer_norm 1536; lm_head tied.
  CHECK(t.parameter_count() == 125239296);
  check_tensor(t, "model.decoder.embed_positions.weight", {2050, 768});
  check_tensor(t, "model.decoder.layers.0.self_attn.k_proj.bias", {768});
  check_tensor(t, "model.decoder.layers.11.fc1.weight", {3072, 768});
  check_tensor(t, "model.decoder.final_layer_norm.weight", {768});
  check_absent(t, "model.decoder.project_in.weight");
  check_tied(t, "lm_head.weight", "model.decoder.embed_tokens.weight");
  CHECK(first_parameter_under(t, "model.decoder.layers.0") ==
        "model.decoder.layers.0.self_attn.k_proj.weight");
  CHECK(t.no_split_classes == std::vector<std::string>{"OPTDecoderLayer"});
  CHECK(t.named_buffers().empty());
  const int pos = t.find_module("model.decoder.embed_positions");
  REQUIRE(pos >= 0);
  CHECK(t.modules[pos].class_name == "OPTLearnedPositionalEmbedding");
}

TEST_CASE("opt: facebook/opt-350m projects embeddings and has no final norm") {
  const TensorTree t = tree("facebook--opt-350m.json");
  // 331,196,416 (the OPT-350m count): embed_tokens 50272*512 = 25,739,264; positions 2050*1024;
  // project_out 1024*512 and project_in 512*1024 (no bias); 24 layers of 12,596,224; no
  // final_layer_norm (do_layer_norm_before false).
  CHECK(t.parameter_count() == 331196416);
  check_tensor(t, "model.decoder.embed_tokens.weight", {50272, 512});
  check_tensor(t, "model.decoder.project_out.weight", {512, 1024});
  check_tensor(t, "model.decoder.project_in.weight", {1024, 512});
  check_absent(t, "model.decoder.project_in.bias");
  check_absent(t, "model.decoder.final_layer_norm.weight");
  check_tied(t, "lm_head.weight", "model.decoder.embed_tokens.weight");
  // The score head reads the projected (512) states.
  CHECK(tree("facebook--opt-350m.json", "OPTForSequenceClassification").parameter_count() ==
        331196416 + 512 * 2);
  // accelerate builds OPTModel: the same tensors without the (tied) lm_head.
  const Report compat = report("facebook--opt-350m.json", Mode::kAccelerate);
  CHECK(compat.model_class == "OPTModel");
  CHECK(compat.parameters == 331196416);
  CHECK(compat.rows[0].total_bytes == 331196416.0 * 4);
}

// ------------------------------------------------------------------------------------ bloom

TEST_CASE("bloom: bigscience/bloom-560m") {
  const TensorTree t = tree("bigscience--bloom-560m.json");
  CHECK(t.class_name() == "BloomForCausalLM");
  // 559,214,592 (model card): word_embeddings 250880*1024 = 256,901,120, its LayerNorm 2048;
  // 24 blocks of 2 LN 4096, query_key_value 1024*3072+3072, dense 1024*1024+1024,
  // dense_h_to_4h 1024*4096+4096, dense_4h_to_h 4096*1024+1024 (12,596,224); ln_f 2048; tied.
  CHECK(t.parameter_count() == 559214592);
  check_tensor(t, "transformer.word_embeddings_layernorm.weight", {1024});
  check_tensor(t, "transformer.h.0.self_attention.query_key_value.weight", {3072, 1024});
  check_tensor(t, "transformer.h.23.mlp.dense_4h_to_h.weight", {1024, 4096});
  check_tied(t, "lm_head.weight", "transformer.word_embeddings.weight");
  CHECK(first_parameter_under(t, "transformer.h.0") == "transformer.h.0.input_layernorm.weight");
  CHECK(t.no_split_classes == std::vector<std::string>{"BloomBlock"});
  CHECK(t.named_buffers().empty());  // ALiBi is built in forward()

  // BloomConfig reads n_embed before hidden_size.
  const TensorTree n_embed = inline_tree(
      R"({"model_type": "bloom", "n_embed": 32, "hidden_size": 64, "n_head": 4, "n_layer": 1,
          "vocab_size": 10})",
      "BloomModel");
  check_tensor(n_embed, "word_embeddings.weight", {10, 32});
}

// ----------------------------------------------------------------------------------- falcon

TEST_CASE("falcon: tiiuae/falcon-7b, and accelerate's FalconForSequenceClassification") {
  const TensorTree t = tree("tiiuae--falcon-7b.json");
  CHECK(t.class_name() == "FalconForCausalLM");
  // 6,921,720,704 (the Hub total): word_embeddings 65024*4544 = 295,469,056; 32 layers of
  // input_layernorm 9088, query_key_value 4544*(4544+2*64) (multi-query), dense 4544*4544,
  // MLP 2*4544*18176, no biases (207,070,080 each); ln_f 9088; lm_head tied.
  CHECK(t.parameter_count() == 6921720704ULL);
  check_tensor(t, "transformer.h.0.self_attention.query_key_value.weight", {4672, 4544});
  check_absent(t, "transformer.h.0.self_attention.query_key_value.bias");
  check_tensor(t, "transformer.h.31.mlp.dense_h_to_4h.weight", {18176, 4544});
  check_tensor(t, "transformer.h.0.input_layernorm.bias", {4544});
  check_absent(t, "transformer.h.0.post_attention_layernorm.weight");  // parallel_attn
  check_absent(t, "transformer.h.0.ln_attn.weight");
  check_tied(t, "lm_head.weight", "transformer.word_embeddings.weight");
  CHECK(first_parameter_under(t, "transformer.h.0") ==
        "transformer.h.0.self_attention.query_key_value.weight");
  CHECK(t.no_split_classes == std::vector<std::string>{"FalconDecoderLayer"});
  check_buffer(t, "transformer.h.0.self_attention.rotary_emb.cos_cached", {2048, 64},
               DType::kF32, BufferEra::kLegacyOnly);
  check_buffer(t, "transformer.rotary_emb.inv_freq", {32}, DType::kF32, BufferEra::kCurrentOnly);

  // accelerate takes the first AutoModelFor* key of auto_map: AutoModelForSequenceClassification.
  const Report r = report("tiiuae--falcon-7b.json", Mode::kAccelerate);
  CHECK(r.model_class == "FalconForSequenceClassification");
  // No lm_head; score Linear(4544, 2, bias=False).
  CHECK(r.parameters == 6921720704ULL + 4544 * 2);
  // Per layer rotary: inv_freq 32*4 + cos/sin 2*2048*64*4 = 1,048,704 bytes; 32 layers.
  CHECK(r.buffers_bytes == 32 * 1048704.0);
  CHECK(r.rows[0].total_bytes == 6921729792.0 * 4 + 33558528.0);
  CHECK(r.rows[0].total == "25.82 GB");
  REQUIRE_FALSE(r.largest_layer_names.empty());
  CHECK(r.largest_layer_names[0] == "transformer.word_embeddings");
  CHECK(r.rows[0].largest_layer == "1.1 GB");
}

TEST_CASE("falcon: tiiuae/falcon-40b (new decoder architecture) and its RefinedWeb config") {
  const TensorTree t = tree("tiiuae--falcon-40b.json");
  // 41,303,293,952 (the Hub total): word_embeddings 65024*8192; 60 layers of ln_attn + ln_mlp
  // 4*8192, query_key_value 8192*(128+2*8)*64, dense 8192*8192, MLP 2*8192*32768; ln_f; tied.
  CHECK(t.parameter_count() == 41303293952ULL);
  check_tensor(t, "transformer.h.0.self_attention.query_key_value.weight", {9216, 8192});
  check_tensor(t, "transformer.h.59.ln_attn.weight", {8192});
  check_tensor(t, "transformer.h.59.ln_mlp.bias", {8192});
  check_absent(t, "transformer.h.0.input_layernorm.weight");

  // The pre-integration revision: model_type RefinedWeb, n_head / n_head_kv / n_layer, and an
  // auto_map with only AutoModelForCausalLM (remote RWForCausalLM, described with Falcon's
  // classes). architectures[0] is RWForCausalLM, which memfit does not know: base class + note.
  const Report legacy = report("tiiuae--falcon-40b-RefinedWeb-legacy.json", Mode::kAccelerate);
  CHECK(legacy.model_type == "RefinedWeb");
  CHECK(legacy.model_class == "FalconForCausalLM");
  CHECK(legacy.parameters == 41303293952ULL);
  const TensorTree lt = tree("tiiuae--falcon-40b-RefinedWeb-legacy.json", "FalconForCausalLM");
  check_tensor(lt, "transformer.h.0.self_attention.query_key_value.weight", {9216, 8192});
  check_tensor(lt, "transformer.h.0.ln_mlp.weight", {8192});
  auto base = memfit::build_model(request("tiiuae--falcon-40b-RefinedWeb-legacy.json", Mode::kMemfit));
  REQUIRE(base.ok());
  CHECK(base->class_name() == "FalconModel");
  CHECK_FALSE(base->notes.empty());
}

TEST_CASE("falcon: ALiBi, multi-head, sequential layout (falcon-rw-1b shape)") {
  // tiiuae/falcon-rw-1b's layout: alibi, bias, no multi_query, parallel_attn false.
  const TensorTree t = inline_tree(
      R"({"model_type": "falcon", "vocab_size": 50304, "hidden_size": 2048,
          "num_hidden_layers": 24, "num_attention_heads": 32, "alibi": true, "bias": true,
          "multi_query": false, "parallel_attn": false, "new_decoder_architecture": false})",
      "FalconForCausalLM");
  // embeddings 50304*2048; 24 layers of qkv 2048*6144+6144, dense 2048*2048+2048,
  // MLP 2048*8192+8192 + 8192*2048+2048, input/post_attention LN 2*4096 (50,358,272 each);
  // ln_f 4096; tied → 1,311,625,216.
  CHECK(t.parameter_count() == 1311625216);
  check_tensor(t, "transformer.h.0.self_attention.query_key_value.bias", {6144});
  check_tensor(t, "transformer.h.0.post_attention_layernorm.weight", {2048});
  check_absent(t, "transformer.h.0.self_attention.rotary_emb.inv_freq");  // ALiBi: no rotary
  CHECK(count_buffers(t, BufferEra::kLegacyOnly) == 0);
}

// -------------------------------------------------------------------------------------- phi

TEST_CASE("phi: microsoft/phi-2") {
  const TensorTree t = tree("microsoft--phi-2.json");
  CHECK(t.class_name() == "PhiForCausalLM");
  // 2,779,683,840 (model card: 2.7B; the Hub total): embed_tokens 51200*2560 = 131,072,000;
  // 32 layers of q/k/v/dense 4*(2560*2560+2560), fc1 2560*10240+10240, fc2 10240*2560+2560,
  // input_layernorm 5120 (78,671,360 each); final_layernorm 5120; lm_head with bias
  // 51200*2560+51200 (not tied).
  CHECK(t.parameter_count() == 2779683840ULL);
  check_tensor(t, "model.layers.0.self_attn.dense.weight", {2560, 2560});
  check_tensor(t, "model.layers.0.self_attn.q_proj.bias", {2560});
  check_tensor(t, "model.layers.31.mlp.fc1.weight", {10240, 2560});
  check_tensor(t, "model.final_layernorm.weight", {2560});
  check_tensor(t, "lm_head.bias", {51200});
  check_absent(t, "model.layers.0.self_attn.q_layernorm.weight");
  CHECK(t.no_split_classes == std::vector<std::string>{"PhiDecoderLayer"});
  // int(0.4 * 80) = 32 rotary dims.
  check_buffer(t, "model.layers.0.self_attn.rotary_emb.cos_cached", {2048, 32}, DType::kF32,
               BufferEra::kLegacyOnly);
  check_buffer(t, "model.rotary_emb.inv_freq", {16}, DType::kF32, BufferEra::kCurrentOnly);

  // auto_map names AutoModelForCausalLM, so accelerate builds PhiForCausalLM.
  const Report r = report("microsoft--phi-2.json", Mode::kAccelerate);
  CHECK(r.model_class == "PhiForCausalLM");
  CHECK(r.parameters == 2779683840ULL);
  // inv_freq 16*4 + cos/sin 2*2048*32*4 = 524,352 bytes per layer.
  CHECK(r.buffers_bytes == 32 * 524352.0);

  // qk_layernorm adds two LayerNorm(head_dim) per attention.
  const TensorTree qk = inline_tree(
      R"({"model_type": "phi", "vocab_size": 10, "hidden_size": 64, "intermediate_size": 128,
          "num_hidden_layers": 1, "num_attention_heads": 4, "qk_layernorm": true})",
      "PhiModel");
  check_tensor(qk, "layers.0.self_attn.q_layernorm.weight", {16});
  check_tensor(qk, "layers.0.self_attn.k_layernorm.bias", {16});
}

// --------------------------------------------------------------------------------- stablelm

TEST_CASE("stablelm: stabilityai/stablelm-2-1_6b") {
  const TensorTree t = tree("stabilityai--stablelm-2-1_6b.json");
  CHECK(t.class_name() == "StableLmForCausalLM");
  // 1,644,515,328 (the Hub total): embed_tokens 100352*2048 = 205,520,896; 24 layers of
  // q/k/v 3*(2048*2048+2048) (use_qkv_bias), o_proj 2048*2048, gated MLP 3*2048*5632, two
  // LayerNorms 2*4096 (51,394,560 each); norm 4096; untied lm_head 205,520,896.
  CHECK(t.parameter_count() == 1644515328ULL);
  check_tensor(t, "model.layers.0.self_attn.q_proj.bias", {2048});
  check_absent(t, "model.layers.0.self_attn.o_proj.bias");
  check_tensor(t, "model.layers.23.mlp.gate_proj.weight", {5632, 2048});
  check_tensor(t, "model.layers.0.post_attention_layernorm.bias", {2048});
  check_tensor(t, "model.norm.bias", {2048});
  check_tensor(t, "lm_head.weight", {100352, 2048});
  CHECK(t.no_split_classes == std::vector<std::string>{"StableLmDecoderLayer"});
  // int(64 * 0.25) = 16 rotary dims, max_position_embeddings 4096.
  check_buffer(t, "model.layers.0.self_attn.rotary_emb.cos_cached", {4096, 16}, DType::kF32,
               BufferEra::kLegacyOnly);
  check_buffer(t, "model.rotary_emb.inv_freq", {8}, DType::kF32, BufferEra::kCurrentOnly);
  CHECK(tree("stabilityai--stablelm-2-1_6b.json", "StableLmForSequenceClassification")
            .parameter_count() == 1644515328ULL - 205520896 + 2048 * 2);
}

TEST_CASE("stablelm: per-head q/k LayerNorms and the parallel residual (stablelm-2-12b layout)") {
  const TensorTree t = inline_tree(
      R"({"model_type": "stablelm", "vocab_size": 100, "hidden_size": 64,
          "intermediate_size": 128, "num_hidden_layers": 1, "num_attention_heads": 4,
          "num_key_value_heads": 2, "qk_layernorm": true, "use_parallel_residual": true})",
      "StableLmForCausalLM");
  // embed 6400; q 64*64, k and v 64*32 each, o 64*64; q norms 4*16 and k norms 2*16 (weight
  // only: bias=False); MLP 3*64*128; input_layernorm 128, no post_attention_layernorm;
  // norm 128; lm_head 6400.
  CHECK(t.parameter_count() == 6400 + 4096 + 2048 + 2048 + 4096 + 64 + 32 + 24576 + 128 + 128 +
                                   6400);
  check_tensor(t, "model.layers.0.self_attn.q_layernorm.norms.3.weight", {16});
  check_absent(t, "model.layers.0.self_attn.q_layernorm.norms.3.bias");
  check_tensor(t, "model.layers.0.self_attn.k_layernorm.norms.1.weight", {16});
  check_absent(t, "model.layers.0.self_attn.k_layernorm.norms.2.weight");
  check_absent(t, "model.layers.0.post_attention_layernorm.weight");
  const int m = t.find_module("model.layers.0.self_attn.q_layernorm");
  REQUIRE(m >= 0);
  CHECK(t.modules[m].class_name == "StableLmLayerNormPerHead");
}

// ------------------------------------------------------------------------------ bad configs

TEST_CASE("decoders: bad configs name the problem") {
  // 12 heads do not divide 100.
  CHECK(error_of(R"({"model_type": "gpt_neox", "hidden_size": 100, "num_attention_heads": 12})") ==
        ErrorCode::kInvalidValue);
  CHECK(error_of(R"({"model_type": "falcon", "num_attention_heads": 0})") ==
        ErrorCode::kInvalidValue);
  CHECK(error_of(R"({"model_type": "opt", "vocab_size": 0})") == ErrorCode::kInvalidValue);
  CHECK(error_of(R"({"model_type": "bloom", "n_layer": "two"})") == ErrorCode::kWrongType);
  // Cross-attention is not implemented for multi-query GPTBigCode.
  CHECK(error_of(R"({"model_type": "gpt_bigcode", "add_cross_attention": true})") ==
        ErrorCode::kInvalidValue);
  CHECK(error_of(R"({"model_type": "phi", "partial_rotary_factor": 1.5})") ==
        ErrorCode::kInvalidValue);
  CHECK(error_of(R"({"model_type": "stablelm", "hidden_size": 64, "num_attention_heads": 5})") ==
        ErrorCode::kInvalidValue);
  CHECK(error_of(R"({"model_type": "gptj", "n_head": -1})") == ErrorCode::kInvalidValue);
}
