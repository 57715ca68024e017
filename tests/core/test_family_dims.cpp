// Who fills the model's dimensions (model_dims.h): every transformers family, from the reads that
// build its tree (BuildRequest::dims); the generic reader, read_model_dims, is only the fallback
// for a config no family reads. The families that used the generic reader before they filled
// their own dims give exactly what it gave, field by field, on the Hub configs of
// tests/fixtures/configs, examples/configs and the shared reference's configs.
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "memfit/model/arch.h"
#include "memfit/model/model.h"
#include "memfit/model/model_dims.h"
#include "support/model_of.h"
#include "support/reference.h"

using namespace memfit;

namespace {

// What the family fills when it builds `class_name`: nullopt when it leaves the dims to the
// generic reader.
std::optional<ModelDims> family_dims(const Family& f, const Config& config,
                                     std::string_view class_name) {
  std::optional<ModelDims> dims;
  f.build(BuildRequest{config, class_name, "", &dims});
  return dims;
}

std::string describe(const LayerDims& l) {
  return fmt::format(
      "attention {} window {} sinks {} heads {} kv {} k {} v {} mla {}/{}/{}/{}/{} state {}/{} "
      "rope {:.17g}/{}/'{}'/{:.17g}/{} moe {}/{}/{}/{}/{} intermediate {}",
      static_cast<int>(l.attention), l.window, l.sinks, l.heads, l.kv_heads, l.k_head_dim,
      l.v_head_dim, l.mla.q_lora_rank, l.mla.kv_lora_rank, l.mla.qk_rope_head_dim,
      l.mla.qk_nope_head_dim, l.mla.v_head_dim, l.state.conv_state, l.state.ssm_state,
      l.rope.theta, l.rope.scaled, l.rope.scaling_type, l.rope.factor, l.rope.rotary_dims,
      l.moe.experts, l.moe.active, l.moe.shared, l.moe.expert_width, l.moe.shared_width,
      l.intermediate);
}

// Every field, one line per layer, so that a failure shows which one differs.
std::string describe(const ModelDims& d) {
  std::string out = fmt::format(
      "hidden {} vocab {} layers {} encoder_layers {} max_positions {} tied {} norm_eps {:.17g}\n"
      "heads {} kv {} head_dim {} intermediate {} experts {}/{} gated {} dropout {} "
      "encoder_decoder {} generative {}\nwindow_rule '{}' cross {}/{}/{}/{} attention_error '{}'\n",
      d.hidden, d.vocab, d.layers, d.encoder_layers, d.max_positions, d.tied_embeddings,
      d.norm_eps, d.heads, d.kv_heads, d.head_dim, d.intermediate, d.experts, d.experts_per_token,
      d.gated_mlp, d.dropout, d.encoder_decoder, d.generative, d.window_rule, d.cross.layers,
      d.cross.kv_heads, d.cross.head_dim, d.cross.default_encoder_length,
      d.attention_error ? d.attention_error->message() : "");
  for (std::size_t i = 0; i < d.per_layer.size(); ++i)
    out += fmt::format("layer {}: {}\n", i, describe(d.per_layer[i]));
  return out;
}

// The Hub configs the tests hold: tests/fixtures/configs/*.json, examples/configs/*.json and the
// shared reference's configs/<model>/config.json (skipped loudly when it is absent).
std::vector<std::string> hub_config_paths() {
  std::vector<std::string> paths;
  const std::string examples = std::string(MEMFIT_SOURCE_DIR) + "/examples/configs";
  for (const std::string& dir : {test::fixture_path("configs"), examples})
    for (const auto& name : test::list_dir(dir))
      if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0)
        paths.push_back(dir + "/" + name);
  if (const auto ref = test::reference_dir()) {
    for (const auto& model : test::list_dir(*ref + "/configs"))
      if (test::file_exists(*ref + "/configs/" + model + "/config.json"))
        paths.push_back(*ref + "/configs/" + model + "/config.json");
  } else {
    test::skip_loudly("the shared reference's configs (family dims against the generic reader)");
  }
  return paths;
}

}  // namespace

TEST_CASE("family dims: every transformers family fills the dims of every class it builds") {
  int built = 0;
  for (const Family* f : families()) {
    if (f->library != "transformers") continue;
    for (std::string_view key : f->keys) {
      // The configuration class's defaults: the smallest config a family builds.
      const Config config(Json{{"model_type", std::string(key)}}, "config.json");
      for (const ModelClass& cls : f->classes) {
        const std::string model_type(key), class_name(cls.name);
        CAPTURE(model_type);
        CAPTURE(class_name);
        CHECK(family_dims(*f, config, cls.name).has_value());
        ++built;
      }
    }
  }
  CHECK(built > 100);
}

TEST_CASE("family dims: the families that left the generic reader give what it gave, per field") {
  // Their model_types (Falcon's pre-integration ones too).
  const std::set<std::string> moved = {
      "gpt_neox", "falcon", "RefinedWeb", "RefinedWebModel", "phi", "stablelm", "gptj", "opt",
      "bloom", "gpt_bigcode", "bert", "roberta", "xlm-roberta", "distilbert", "albert", "vit",
      "clip", "t5", "bart", "whisper", "idefics"};
  std::map<const Family*, int> compared;
  for (const std::string& path : hub_config_paths()) {
    const std::string text = test::read_text(path);
    const Json json = Config::parse(text, path);
    if (!json.contains("model_type") || !json["model_type"].is_string()) continue;
    const std::string model_type = json["model_type"].get<std::string>();
    if (moved.count(model_type) == 0) continue;
    CAPTURE(path);
    const Model m = test::model_of(text);
    const Family* f = find_family("transformers", model_type);
    REQUIRE(f != nullptr);
    std::optional<ModelDims> own = family_dims(*f, m.config, m.tree.class_name());
    REQUIRE(own.has_value());
    finish_model_dims(*own, m.config, m.tree);
    ModelDims generic = read_model_dims(m.config);
    finish_model_dims(generic, m.config, m.tree);
    CHECK(describe(*own) == describe(generic));
    // And the model's dims are the family's.
    REQUIRE(m.dims.get() != nullptr);
    CHECK(describe(*m.dims.get()) == describe(*own));
    ++compared[f];
  }
  // 19 families: gpt_neox, falcon, phi, stablelm, gptj, opt, bloom, gpt_bigcode, bert, roberta,
  // xlm_roberta, distilbert, albert, vit, clip, t5, bart, whisper, idefics — each on a config.
  CHECK(compared.size() == 19);
}
