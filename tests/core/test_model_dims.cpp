// The model's dimensions (core/include/memfit/model/model_dims.h): filled by the family from the
// reads that build its tree, per layer. Expected values are the Hub configs' own numbers
// (tests/fixtures/configs/, tests/fixtures/kv/) and the configuration classes' defaults.
#include <doctest/doctest.h>

#include <string>

#include "memfit/memory/estimate.h"
#include "memfit/memory/kv_cache.h"
#include "memfit/memory/will_it_run.h"
#include "memfit/model/model.h"
#include "support/model_of.h"
#include "support/reference.h"

using namespace memfit;

namespace {

using test::model_of;

const ModelDims& dims_of(const Model& m) {
  REQUIRE(m.dims.get() != nullptr);
  return *m.dims.get();
}

int count(const ModelDims& d, AttentionKind kind) {
  int n = 0;
  for (const auto& l : d.per_layer) n += l.attention == kind;
  return n;
}

}  // namespace

TEST_CASE("model dims: Llama-3-8B's GQA — 32 query heads share 8 key/value heads in every layer") {
  const Model m = model_of(test::fixture("configs/meta-llama--Meta-Llama-3-8B.json"));
  const ModelDims& d = dims_of(m);
  CHECK(d.hidden == 4096);
  CHECK(d.vocab == 128256);
  CHECK(d.layers == 32);
  CHECK(d.max_positions == 8192);
  CHECK_FALSE(d.tied_embeddings);
  CHECK(d.norm_eps == 1e-5);
  REQUIRE(d.per_layer.size() == 32);
  CHECK(count(d, AttentionKind::kFull) == 32);
  for (const LayerDims& l : d.per_layer) {
    CHECK(l.heads == 32);
    CHECK(l.kv_heads == 8);
    CHECK(l.k_head_dim == 128);
    CHECK(l.v_head_dim == 128);
    CHECK(l.rope.theta == 500000.0);
    CHECK_FALSE(l.rope.scaled);
    CHECK(l.moe.experts == 0);
    CHECK(l.intermediate == 14336);
  }
  CHECK(d.window_rule.empty());
}

TEST_CASE("model dims: the family's defaults, which the generic keys cannot know") {
  // MistralConfig defaults num_key_value_heads to 8: a config without it has 8 KV heads (the
  // base class's k_proj is [1024, 4096]), where the generic keys would give every head.
  const Model mistral = model_of(
      R"({"model_type": "mistral", "hidden_size": 4096, "num_hidden_layers": 2, "num_attention_heads": 32})");
  CHECK(dims_of(mistral).per_layer.at(0).kv_heads == 8);
  CHECK(mistral.tree.tensors.at(static_cast<std::size_t>(mistral.tree.find_tensor("layers.0.self_attn.k_proj.weight")))
            .shape == Shape{1024, 4096});
  // DeepseekV2Config defaults kv_lora_rank to 512 and qk_rope_head_dim to 64: MLA without the keys.
  const Model v2 = model_of(
      R"({"model_type": "deepseek_v2", "hidden_size": 256, "num_hidden_layers": 2, "num_attention_heads": 2,
          "vocab_size": 100})");
  const ModelDims& d = dims_of(v2);
  CHECK(count(d, AttentionKind::kMla) == 2);
  CHECK(d.per_layer.at(0).mla.latent() == 576);
}

TEST_CASE("model dims: Gemma-2 and Gemma-3 slide in a per-layer pattern") {
  // gemma-2-9b: cache_implementation "hybrid" → layer i slides unless (i + 1) % 2 == 0.
  const Model g2_model = model_of(test::fixture("kv/google--gemma-2-9b.json"));
  const ModelDims& g2 = dims_of(g2_model);
  REQUIRE(g2.per_layer.size() == 42);
  CHECK(count(g2, AttentionKind::kSliding) == 21);
  CHECK(count(g2, AttentionKind::kFull) == 21);
  CHECK(g2.per_layer[0].attention == AttentionKind::kSliding);
  CHECK(g2.per_layer[0].window == 4096);
  CHECK(g2.per_layer[1].attention == AttentionKind::kFull);
  CHECK(g2.per_layer[1].window == 0);
  CHECK(g2.per_layer[0].kv_heads == 8);
  CHECK(g2.per_layer[0].k_head_dim == 256);
  CHECK(g2.tied_embeddings);
  CHECK(g2.window_rule == "cache_implementation: hybrid");
  // gemma3_text: sliding_window_pattern 6 → layers 5 and 11 of 12 attend fully.
  const Model g3 = model_of(
      R"({"model_type": "gemma3_text", "hidden_size": 64, "num_hidden_layers": 12, "num_attention_heads": 4,
          "num_key_value_heads": 1, "head_dim": 16, "vocab_size": 100, "sliding_window": 512,
          "sliding_window_pattern": 6})");
  const ModelDims& d3 = dims_of(g3);
  CHECK(count(d3, AttentionKind::kSliding) == 10);
  CHECK(d3.per_layer.at(5).attention == AttentionKind::kFull);
  CHECK(d3.per_layer.at(11).attention == AttentionKind::kFull);
  CHECK(d3.per_layer.at(4).window == 512);
  CHECK(d3.window_rule == "sliding_window_pattern");
  // layer_types over chunked attention: the chunk size is the window, the kind says chunked.
  const Model chunked_model = model_of(
      R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
          "vocab_size": 100, "attention_chunk_size": 8192,
          "layer_types": ["chunked_attention", "full_attention"]})");
  const ModelDims& chunked = dims_of(chunked_model);
  CHECK(chunked.per_layer.at(0).attention == AttentionKind::kChunked);
  CHECK(chunked.per_layer.at(0).window == 8192);
  CHECK(chunked.per_layer.at(1).attention == AttentionKind::kFull);
}

TEST_CASE("model dims: DeepSeek-V2-Lite's MLA ranks and its MoE from layer 1 on") {
  const Model d_model = model_of(test::fixture("configs/deepseek-ai--DeepSeek-V2-Lite.json"));
  const ModelDims& d = dims_of(d_model);
  REQUIRE(d.per_layer.size() == 27);
  CHECK(count(d, AttentionKind::kMla) == 27);
  const LayerDims& l = d.per_layer[0];
  CHECK(l.mla.q_lora_rank == 0);  // null: queries are not compressed
  CHECK(l.mla.kv_lora_rank == 512);
  CHECK(l.mla.qk_rope_head_dim == 64);
  CHECK(l.mla.qk_nope_head_dim == 128);
  CHECK(l.mla.v_head_dim == 128);
  CHECK(l.k_head_dim == 192);
  CHECK(l.v_head_dim == 128);
  CHECK(l.rope.scaling_type == "yarn");
  CHECK(l.rope.factor == 40);
  // first_k_dense_replace 1: layer 0 is the dense MLP (10944), layers 1.. route to 6 of 64
  // experts of 1408 plus 2 shared ones: 6 × 1408 + 2 × 1408 = 11,264 wide per token.
  CHECK(l.moe.experts == 0);
  CHECK(l.intermediate == 10944);
  const LayerDims& moe = d.per_layer[1];
  CHECK(moe.moe.experts == 64);
  CHECK(moe.moe.active == 6);
  CHECK(moe.moe.shared == 2);
  CHECK(moe.intermediate == 11264);
  CHECK(d.experts == 64);
  CHECK(d.experts_per_token == 6);
  // The KV cache reads the same: 27 layers × 576-wide latent.
  const AttentionLayout kv = attention_layout(d);
  CHECK(kv.mla);
  CHECK(kv.mla_latent == 576);
}

TEST_CASE("model dims: MoE counts of Mixtral and Qwen1.5-MoE (routed, active, shared)") {
  const Model mixtral_model = model_of(test::fixture("configs/mistralai--Mixtral-8x7B-v0.1.json"));
  const ModelDims& mixtral = dims_of(mixtral_model);
  CHECK(mixtral.per_layer.at(0).moe.experts == 8);
  CHECK(mixtral.per_layer.at(0).moe.active == 2);
  CHECK(mixtral.per_layer.at(0).moe.shared == 0);
  CHECK(mixtral.intermediate == 2 * 14336);
  CHECK(mixtral.per_layer.at(31).kv_heads == 8);
  const Model qwen_model = model_of(test::fixture("configs/Qwen--Qwen1.5-MoE-A2.7B.json"));
  const ModelDims& qwen = dims_of(qwen_model);
  const MoeDims& m = qwen.per_layer.at(0).moe;
  CHECK(m.experts == 60);
  CHECK(m.active == 4);
  CHECK(m.shared == 1);
  CHECK(m.expert_width == 1408);
  CHECK(m.shared_width == 5632);
  CHECK(qwen.intermediate == 4 * 1408 + 5632);
  // use_sliding_window false: no layer slides although sliding_window is set.
  CHECK(count(qwen, AttentionKind::kFull) == 24);
}

TEST_CASE("model dims: quantization_config is read with the model; a bad one only fails will-it-run") {
  const Model gptq = model_of(
      R"({"model_type": "gpt2", "n_layer": 2, "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 64}})");
  REQUIRE(gptq.quantization.get() != nullptr);
  CHECK(gptq.quantization.get()->method == QuantMethod::kGptq);
  CHECK(gptq.quantization.get()->group_size == 64);
  const Model odd = model_of(R"({"model_type": "gpt2", "n_layer": 2, "quantization_config": {"quant_method": "hqq"}})");
  CHECK(odd.quantization.error.has_value());
  const Result<RunReport> r = will_it_run(odd, RunOptions{});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message().find("'hqq'") != std::string::npos);
}

TEST_CASE("model dims: OPT's from its family; a bad layout waits for the KV cache") {
  // OPT's family reads its dims (what the generic keys gave, test_family_dims.cpp).
  const Model opt_model = model_of(test::fixture("configs/facebook--opt-125m.json"));
  const ModelDims& opt = dims_of(opt_model);
  CHECK(opt.hidden == 768);
  CHECK(opt.per_layer.size() == 12);
  CHECK(opt.per_layer.at(0).kv_heads == 12);
  // 'layer_types' of the wrong length: the model builds and estimates; the KV cache says why.
  const Model bad = model_of(
      R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64,
          "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
          "layer_types": ["full_attention"]})");
  CHECK(estimate(bad).ok());
  REQUIRE(dims_of(bad).attention_error.has_value());
  CHECK_THROWS_AS(attention_layout(bad), Error);
  RunOptions ro;
  ro.context = 128;
  const Result<RunReport> r = will_it_run(bad, ro);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message().find("'layer_types' has 1 entries for 2 layers") != std::string::npos);
}
