// The repo kinds' shared part (memfit/repo/repo_kind.h): detection by listing, keys, and the
// api's repo() answering in rounds.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "memfit/api/api.h"
#include "memfit/error.h"
#include "memfit/model/config.h"
#include "memfit/repo/repo_kind.h"

namespace {

using memfit::Json;
using memfit::repo::RepoKind;
using memfit::repo::detect_kind;

}  // namespace

TEST_CASE("repo kind: detected from the listing, adapters and pipelines before their parts") {
  CHECK((detect_kind({"config.json", "model.safetensors"}, "transformers") == RepoKind::kModel));
  CHECK((detect_kind({"adapter_config.json", "adapter_model.safetensors", "config.json"}, "peft") ==
         RepoKind::kPeft));
  CHECK((detect_kind({"model_index.json", "unet/config.json", "text_encoder/config.json"}, "diffusers") ==
         RepoKind::kDiffusers));
  CHECK((detect_kind({"modules.json", "config.json", "1_Pooling/config.json"}, "sentence-transformers") ==
         RepoKind::kSentenceTransformers));
  CHECK((detect_kind({"README.md", "m-Q4_K_M.gguf", "m-Q8_0.gguf"}, "") == RepoKind::kGguf));
  // a transformers repo that also ships a GGUF stays a model unless the Hub says gguf
  CHECK((detect_kind({"config.json", "model.safetensors", "m.gguf"}, "transformers") == RepoKind::kModel));
  CHECK((detect_kind({"config.json", "m.gguf"}, "gguf") == RepoKind::kGguf));
  // only top-level files decide: a nested model_index.json is not a pipeline
  CHECK((detect_kind({"config.json", "extra/model_index.json"}, "") == RepoKind::kModel));
}

TEST_CASE("repo kind: names round-trip, unknown names are named errors, keys name other repos") {
  for (RepoKind k : {RepoKind::kModel, RepoKind::kGguf, RepoKind::kDiffusers,
                     RepoKind::kSentenceTransformers, RepoKind::kPeft})
    CHECK((memfit::repo::kind_from_name(memfit::repo::kind_name(k)) == k));
  CHECK_THROWS_AS(memfit::repo::kind_from_name("onnx"), memfit::Error);
  CHECK(memfit::repo::file_key("", "config.json") == "config.json");
  CHECK(memfit::repo::file_key("org/base", "config.json") == "org/base:config.json");
}

TEST_CASE("api repo(): a model needs nothing more; bad requests come back as {code, message}") {
  const Json model = Json::parse(memfit::api::repo(R"({"listing":["config.json"],"library":"transformers"})"));
  CHECK(model["kind"] == "model");
  CHECK_FALSE(model.contains("needs"));
  CHECK_FALSE(model.contains("report"));

  for (const char* bad : {R"({"listing":"config.json"})", R"({"kind":"onnx"})", R"({"texts":{"a":1}})",
                          R"({"sizes":{"a":-1}})", R"({"options":{"gpu_bytes":"24GB"}})", "[1,2]", "{"}) {
    const Json reply = Json::parse(memfit::api::repo(bad));
    REQUIRE_MESSAGE(reply.contains("error"), std::string(bad));
    CHECK_MESSAGE(reply["error"]["code"].is_string(), std::string(bad));
    CHECK_MESSAGE(!reply["error"]["message"].get<std::string>().empty(), std::string(bad));
  }
}
