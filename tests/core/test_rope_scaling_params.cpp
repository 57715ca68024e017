// RopeDims keeps the scaling object's parameters (read_rope), for a runtime that computes the
// scaled frequencies (native/torch/rope.cpp): every number by key, booleans as 0/1, LongRoPE's
// lists; none when the RoPE is not scaled. Both layouts: legacy rope_scaling and transformers 5's
// rope_parameters.
#include <doctest/doctest.h>

#include "memfit/model/model_dims.h"
#include "support/model_of.h"
#include "support/reference.h"

using namespace memfit;

namespace {

RopeDims rope_of(const std::string& json) { return read_rope(Config(Json::parse(json), "config.json"), 10000.0, 64); }

}  // namespace

TEST_CASE("rope scaling params: DeepSeek-V3's published yarn rope_scaling reaches every layer's RopeDims") {
  const Model m = test::model_of(test::fixture("configs/deepseek-ai--DeepSeek-V3.json"));
  const ModelDims* dims = m.dims.get();
  REQUIRE(dims);
  REQUIRE(!dims->per_layer.empty());
  const RopeDims& r = dims->per_layer.front().rope;
  CHECK(r.scaling_type == "yarn");
  CHECK(r.factor == 40);
  CHECK(r.param("beta_fast") == 32);
  CHECK(r.param("beta_slow") == 1);
  CHECK(r.param("mscale") == 1.0);
  CHECK(r.param("mscale_all_dim") == 1.0);
  CHECK(r.param("original_max_position_embeddings") == 4096);
  CHECK(!r.param("attention_factor"));
}

TEST_CASE("rope scaling params: llama3 and yarn in rope_parameters, booleans as 0/1") {
  const RopeDims llama3 = rope_of(R"({"rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
      "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}})");
  CHECK(llama3.scaled);
  CHECK(llama3.theta == 500000.0);
  CHECK(llama3.param("low_freq_factor") == 1.0);
  CHECK(llama3.param("high_freq_factor") == 4.0);
  CHECK(llama3.param("original_max_position_embeddings") == 8192);
  const RopeDims yarn = rope_of(R"({"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "truncate": false}})");
  CHECK(yarn.param("truncate") == 0.0);
  CHECK(yarn.param("factor") == 4.0);
}

TEST_CASE("rope scaling params: LongRoPE's lists; nothing kept when not scaled") {
  const RopeDims lr = rope_of(R"({"rope_scaling": {"type": "longrope", "short_factor": [1, 1.5],
      "long_factor": [2, 3.5], "attention_factor": 1.2}})");
  CHECK(lr.short_factor == std::vector<double>{1, 1.5});
  CHECK(lr.long_factor == std::vector<double>{2, 3.5});
  CHECK(lr.param("attention_factor") == 1.2);
  const RopeDims plain = rope_of(R"({"rope_theta": 1e6, "rope_parameters": {"rope_type": "default", "rope_theta": 1e6}})");
  CHECK(!plain.scaled);
  CHECK(plain.params.empty());
  CHECK(plain.short_factor.empty());
}
