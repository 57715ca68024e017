// Families transformers added after 4.40 (issue 16): Qwen3, Qwen3-MoE, Gemma 2, Gemma 3 (text).
//
// Authorities: the real config.json of Qwen/Qwen3-8B and Qwen/Qwen3-30B-A3B
// (../shared/reference/real-hub) with the counts their model cards publish (Qwen3-8B: 8.2B,
// 6.95B non-embedding; Qwen3-30B-A3B: 30.5B total, 3.3B activated, 29.9B non-embedding), and the
// parameter counts the Hub shows for google/gemma-2-2b (2,614,341,888) and google/gemma-3-1b-pt
// (999,885,952) on their public configs' dimensions; google/gemma-2-9b's real config is in
// test_inference_fit.cpp.
#include <doctest/doctest.h>

#include <cmath>

#include "memfit/memory/estimate.h"
#include "memfit/model/model.h"
#include "memfit/model/model_dims.h"
#include "support/model_of.h"
#include "support/reference.h"

using namespace memfit;

namespace {

using test::model_of;

// The card's figure: `billions` rounded to `digits` decimals.
double billions(std::uint64_t n, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(static_cast<double>(n) / 1e9 * scale) / scale;
}

const TensorInfo& tensor(const TensorTree& t, const std::string& name) {
  const int i = t.find_tensor(name);
  REQUIRE_MESSAGE(i >= 0, name);
  return t.tensors[static_cast<std::size_t>(i)];
}

std::vector<std::string> children(const TensorTree& t, const std::string& module) {
  const int m = t.find_module(module);
  REQUIRE_MESSAGE(m >= 0, module);
  std::vector<std::string> out;
  for (int c : t.modules[static_cast<std::size_t>(m)].children) out.push_back(t.modules[static_cast<std::size_t>(c)].name);
  return out;
}

std::uint64_t embedding_params(const TensorTree& t) {
  std::uint64_t n = 0;
  for (const auto& x : t.tensors)
    if (!x.is_alias() && (x.name == "model.embed_tokens.weight" || x.name == "lm_head.weight")) n += x.numel;
  return n;
}

}  // namespace

TEST_CASE("qwen3: Qwen/Qwen3-8B's real config gives its card's 8.2B (6.95B without embeddings)") {
  const auto ref = test::reference_dir();
  if (!ref) return test::skip_loudly("Qwen3-8B (real-hub config)");
  const Model m = model_of(test::read_text(*ref + "/real-hub/Qwen--Qwen3-8B/config.json"), "Qwen/Qwen3-8B");
  CHECK(m.class_name() == "Qwen3ForCausalLM");
  CHECK(billions(m.parameters, 1) == 8.2);
  CHECK(billions(m.parameters - embedding_params(m.tree), 2) == 6.95);
  CHECK(tensor(m.tree, "model.layers.0.self_attn.q_norm.weight").shape == Shape{128});
  CHECK(tensor(m.tree, "model.layers.0.self_attn.k_proj.weight").shape == Shape{1024, 4096});
  CHECK(m.tree.find_tensor("model.layers.0.self_attn.q_proj.bias") < 0);  // attention_bias false
  CHECK(children(m.tree, "model.layers.0.self_attn") ==
        std::vector<std::string>{"model.layers.0.self_attn.q_proj", "model.layers.0.self_attn.k_proj",
                                 "model.layers.0.self_attn.v_proj", "model.layers.0.self_attn.o_proj",
                                 "model.layers.0.self_attn.q_norm", "model.layers.0.self_attn.k_norm"});
}

TEST_CASE("qwen3_moe: Qwen/Qwen3-30B-A3B's real config gives 30.5B total, 3.3B activated, 29.9B non-embedding") {
  const auto ref = test::reference_dir();
  if (!ref) return test::skip_loudly("Qwen3-30B-A3B (real-hub config)");
  const Model m = model_of(test::read_text(*ref + "/real-hub/Qwen--Qwen3-30B-A3B/config.json"), "Qwen/Qwen3-30B-A3B");
  CHECK(m.class_name() == "Qwen3MoeForCausalLM");
  CHECK(billions(m.parameters, 1) == 30.5);
  CHECK(billions(m.parameters - embedding_params(m.tree), 1) == 29.9);
  REQUIRE(m.dims.get());
  const ModelDims dims = *m.dims.get();
  CHECK(dims.experts == 128);
  CHECK(dims.experts_per_token == 8);
  // The card writes the activated count truncated ("3.3B" for 3.35B), its totals rounded.
  const double active = active_parameters(m.tree, dims) / 1e9;
  CHECK(active >= 3.3);
  CHECK(active < 3.4);
  CHECK(tensor(m.tree, "model.layers.47.mlp.experts.127.down_proj.weight").shape == Shape{2048, 768});
  CHECK(tensor(m.tree, "model.layers.0.mlp.gate.weight").shape == Shape{128, 2048});
  CHECK(m.tree.find_module("model.layers.0.mlp.shared_expert") < 0);
}

TEST_CASE("gemma2: google/gemma-2-2b's dimensions give the Hub's 2,614,341,888; four norms per layer") {
  const Model m = model_of(
      R"({"model_type": "gemma2", "architectures": ["Gemma2ForCausalLM"], "vocab_size": 256000,
          "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
          "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
          "max_position_embeddings": 8192, "sliding_window": 4096, "cache_implementation": "hybrid",
          "hidden_activation": "gelu_pytorch_tanh", "torch_dtype": "float32"})",
      "google/gemma-2-2b");
  CHECK(m.class_name() == "Gemma2ForCausalLM");
  CHECK(m.parameters == 2614341888ULL);
  CHECK(tensor(m.tree, "lm_head.weight").is_alias());
  CHECK(children(m.tree, "model.layers.3") ==
        std::vector<std::string>{"model.layers.3.self_attn", "model.layers.3.mlp", "model.layers.3.input_layernorm",
                                 "model.layers.3.post_attention_layernorm", "model.layers.3.pre_feedforward_layernorm",
                                 "model.layers.3.post_feedforward_layernorm"});
}

TEST_CASE("gemma3_text: google/gemma-3-1b-pt's dimensions give the Hub's 999,885,952; q/k norms") {
  const Model m = model_of(
      R"({"model_type": "gemma3_text", "architectures": ["Gemma3ForCausalLM"], "vocab_size": 262144,
          "hidden_size": 1152, "intermediate_size": 6912, "num_hidden_layers": 26,
          "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256,
          "max_position_embeddings": 32768, "sliding_window": 512, "sliding_window_pattern": 6,
          "torch_dtype": "bfloat16"})",
      "google/gemma-3-1b-pt");
  CHECK(m.class_name() == "Gemma3ForCausalLM");
  CHECK(m.parameters == 999885952ULL);
  CHECK(tensor(m.tree, "model.layers.0.self_attn.k_norm.weight").shape == Shape{256});
  CHECK(m.tree.find_module("model.rotary_emb_local") >= 0);
  const TensorTree current = for_era(m.tree, false);
  CHECK(current.find_tensor("model.embed_tokens.embed_scale") >= 0);
}
