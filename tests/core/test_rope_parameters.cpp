// transformers 5's `rope_parameters` (configuration_utils / modeling_rope_utils
// RotaryEmbeddingConfigMixin): rope_theta, rope_type, factor and partial_rotary_factor move from
// the top level and `rope_scaling` into one object, or one per layer type when every key is one of
// the config's layer_types (standardize_rope_params). A config written either way describes the
// same model, so each family must read the same RoPE, and build the same tree, from both: the
// legacy form of each case is the published config.json (fixtures), the new form the same values
// moved as standardize_rope_params moves them.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "memfit/model/model.h"
#include "memfit/model/model_dims.h"
#include "support/model_of.h"
#include "support/reference.h"

using namespace memfit;

namespace {

using test::model_of;

Json fixture_json(const char* name) { return Json::parse(test::fixture(std::string("configs/") + name)); }

// The legacy keys moved into one rope_parameters object.
Json to_rope_parameters(Json c) {
  Json p = c.contains("rope_scaling") && c["rope_scaling"].is_object() ? c["rope_scaling"] : Json::object();
  if (p.contains("type") && !p.contains("rope_type")) {
    p["rope_type"] = p["type"];
    p.erase("type");
  }
  if (!p.contains("rope_type")) p["rope_type"] = "default";
  if (c.contains("rope_theta")) p["rope_theta"] = c["rope_theta"];
  if (c.contains("partial_rotary_factor")) p["partial_rotary_factor"] = c["partial_rotary_factor"];
  for (const char* k : {"rope_scaling", "rope_theta", "partial_rotary_factor"}) c.erase(k);
  c["rope_parameters"] = p;
  return c;
}

const RopeDims& first_rope(const Model& m) {
  REQUIRE(m.dims.value);
  REQUIRE_FALSE(m.dims.value->per_layer.empty());
  return m.dims.value->per_layer.front().rope;
}

std::vector<std::string> module_classes(const TensorTree& t) {
  std::vector<std::string> out;
  for (const auto& m : t.modules) out.push_back(m.name + ":" + m.class_name);
  return out;
}

Shape shape_of(const TensorTree& t, const std::string& name) {
  const int i = t.find_tensor(name);
  REQUIRE_MESSAGE(i >= 0, "no tensor " << name);
  return t.tensors[static_cast<std::size_t>(i)].shape;
}

}  // namespace

TEST_CASE("rope_parameters: Llama 3's llama3 scaling reads the same from either form") {
  // meta-llama/Meta-Llama-3-8B: rope_theta 500000, no scaling.
  const Json legacy = fixture_json("meta-llama--Meta-Llama-3-8B.json");
  const Json moved = to_rope_parameters(legacy);
  REQUIRE_FALSE(moved.contains("rope_theta"));
  const Model a = model_of(legacy.dump()), b = model_of(moved.dump());
  CHECK(first_rope(a).theta == 500000.0);
  CHECK(first_rope(b).theta == 500000.0);
  CHECK_FALSE(first_rope(b).scaled);  // rope_type "default"

  // Llama 3.1's scaling (its config.json: factor 8, llama3), as rope_parameters.
  Json scaled = moved;
  scaled["rope_parameters"]["rope_type"] = "llama3";
  scaled["rope_parameters"]["factor"] = 8.0;
  scaled["rope_parameters"]["low_freq_factor"] = 1.0;
  scaled["rope_parameters"]["high_freq_factor"] = 4.0;
  scaled["rope_parameters"]["original_max_position_embeddings"] = 8192;
  const RopeDims r = first_rope(model_of(scaled.dump()));
  CHECK(r.scaled);
  CHECK(r.scaling_type == "llama3");
  CHECK(r.factor == 8.0);
  CHECK(r.theta == 500000.0);
}

TEST_CASE("rope_parameters: keyed by layer type, a uniform family reads full_attention's") {
  // Qwen2-7B (rope_theta 1000000) written with layer_types, as transformers 5 saves it.
  Json c = fixture_json("Qwen--Qwen2-7B.json");
  const std::int64_t layers = c["num_hidden_layers"].get<std::int64_t>();
  c["layer_types"] = Json::array();
  for (std::int64_t i = 0; i < layers; ++i) c["layer_types"].push_back("full_attention");
  c.erase("rope_theta");
  c["rope_parameters"] = Json::parse(R"({"full_attention": {"rope_type": "default", "rope_theta": 1000000.0}})");
  const Model m = model_of(c.dump());
  CHECK(first_rope(m).theta == 1000000.0);
  CHECK_FALSE(first_rope(m).scaled);
  // A flat object whose keys are not layer types is one global dict, whatever layer_types says.
  c["rope_parameters"] = Json::parse(R"({"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 4.0,
                                        "original_max_position_embeddings": 32768})");
  const RopeDims y = first_rope(model_of(c.dump()));
  CHECK(y.scaling_type == "yarn");
  CHECK(y.factor == 4.0);
}

TEST_CASE("rope_parameters: partial_rotary_factor inside it sizes the rotary (Phi-2)") {
  // microsoft/phi-2: hidden 2560, 32 heads (head_dim 80), partial_rotary_factor 0.4 → 32 rotated
  // dims, inv_freq [16] (the current model-level rotary and 4.40's per-layer one).
  const Json legacy = fixture_json("microsoft--phi-2.json");
  const Json moved = to_rope_parameters(legacy);
  REQUIRE_FALSE(moved.contains("partial_rotary_factor"));
  const Model a = model_of(legacy.dump()), b = model_of(moved.dump());
  CHECK(shape_of(a.tree, "model.rotary_emb.inv_freq") == Shape{16});
  CHECK(shape_of(b.tree, "model.rotary_emb.inv_freq") == Shape{16});
  CHECK(shape_of(b.tree, "model.layers.0.self_attn.rotary_emb.inv_freq") == Shape{16});  // 4.40's
}

TEST_CASE("rope_parameters: DeepSeek-V3's yarn picks the same rotary classes from either form") {
  // The remote code reads config.rope_scaling, which transformers 5 aliases to rope_parameters.
  const Json legacy = fixture_json("deepseek-ai--DeepSeek-V3.json");
  const Json moved = to_rope_parameters(legacy);
  const Model a = model_of(legacy.dump()), b = model_of(moved.dump());
  const auto classes = module_classes(b.tree);
  CHECK(classes == module_classes(a.tree));
  CHECK(std::find(classes.begin(), classes.end(),
                  "model.layers.0.self_attn.rotary_emb:DeepseekV3YarnRotaryEmbedding") != classes.end());
  CHECK(first_rope(b).scaling_type == "yarn");
  CHECK(first_rope(b).factor == 40.0);
}

TEST_CASE("rope_parameters: Llama 2's linear scaling class (4.40 tree) from rope_parameters") {
  Json c = fixture_json("meta-llama--Llama-2-7b-hf.json");
  c["rope_scaling"] = Json::parse(R"({"type": "linear", "factor": 2.0})");
  const Model a = model_of(c.dump()), b = model_of(to_rope_parameters(c).dump());
  CHECK(module_classes(a.tree) == module_classes(b.tree));
  CHECK(first_rope(b).scaling_type == "linear");
  CHECK(first_rope(b).factor == 2.0);
}
