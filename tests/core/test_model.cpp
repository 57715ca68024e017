// The Model value (core/include/memfit/model/model.h): the config is parsed once, and everything
// that follows — estimate, will-it-run, the planner — takes the model without parsing it again.
#include <doctest/doctest.h>

#include "memfit/memory/estimate.h"
#include "memfit/memory/kv_cache.h"
#include "memfit/memory/will_it_run.h"
#include "memfit/model/model.h"
#include "memfit/plan/plan.h"
#include "support/reference.h"

using namespace memfit;

TEST_CASE("model: one parse of config.json serves estimate, will-it-run and every planner strategy") {
  EstimateRequest req;
  req.config_text = test::fixture("configs/meta-llama--Meta-Llama-3-8B.json");
  req.name = "meta-llama/Meta-Llama-3-8B";
  const std::size_t before = Config::parse_count();
  const Result<Model> model = build_model(req);
  REQUIRE(model.ok());
  CHECK(Config::parse_count() == before + 1);
  CHECK(model->class_name() == "LlamaForCausalLM");
  // The dims came with that parse, from the family: the KV cache reads them, not the config.
  REQUIRE(model->dims.get() != nullptr);
  CHECK(model->dims.get()->per_layer.size() == 32);
  CHECK(attention_layout(*model).layers.at(0).kv_heads == 8);

  REQUIRE(estimate(*model).ok());
  RunOptions ro;
  ro.context = 8192;
  ro.gpu = "RTX 4090";
  REQUIRE(will_it_run(*model, ro).ok());
  for (const char* strategy : {"auto", "sequential", "balanced_low_0", "fit"}) {
    plan::PlanRequest pr;
    pr.max_memory = *plan::parse_max_memory("0=8GiB,1=8GiB,cpu=32GiB");
    pr.strategy = *plan::strategy_from_name(strategy);
    CHECK_MESSAGE(plan::run_plan(*model, pr).ok(), strategy);
  }
  // accelerate's class, planned with `fit`: the generating class's KV cache, from the same Config.
  const Result<Model> compat = rebuild_for_mode(*model, Mode::kAccelerate);
  REQUIRE(compat.ok());
  CHECK(compat->class_name() == "LlamaModel");
  plan::PlanRequest fit;
  fit.max_memory = *plan::parse_max_memory("0=8GiB,cpu=32GiB");
  fit.strategy = plan::Strategy::kFit;
  REQUIRE(plan::run_plan(*compat, fit).ok());
  CHECK(Config::parse_count() == before + 1);
}

TEST_CASE("model: the convenience entry points are build_model + the Model overloads") {
  EstimateRequest req;
  req.config_text = test::fixture("configs/gpt2.json");
  req.name = "gpt2";
  const Result<Model> model = build_model(req);
  REQUIRE(model.ok());
  const auto a = estimate(*model), b = estimate(req);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(render_table(*a) == render_table(*b));
  CHECK(a->parameters == 124439808);  // openai-community/gpt2's published count
  // A malformed config fails in build_model, named.
  req.config_text = "{\"model_type\": ";
  const Result<Model> bad = build_model(req);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code() == ErrorCode::kInvalidJson);
}
