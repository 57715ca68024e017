// The run options' vocabularies (memfit/memory/options.h, plan/strategy.h), their defaults, and
// error messages that name options (memfit/option_error.h).
#include <doctest/doctest.h>

#include <string>

#include "memfit/memory/options.h"
#include "memfit/memory/training.h"
#include "memfit/memory/will_it_run.h"
#include "memfit/option_error.h"
#include "memfit/plan/plan.h"

using namespace memfit;

namespace {

template <typename E, std::size_t N>
void check_round_trip(const NameRow<E> (&table)[N]) {
  for (const auto& r : table) {
    CAPTURE(std::string(r.name));
    REQUIRE(value_of(table, r.name) == r.value);
    const std::string_view canonical = name_of(table, r.value);
    CHECK(canonical != "?");
    CHECK(value_of(table, canonical) == r.value);
    const std::string listed = ", " + name_list(table) + ", ";
    CHECK((listed.find(", " + std::string(r.name) + ", ") != std::string::npos) != r.alias);
  }
}

std::string spelled_as_flags(const Error& e) {
  return e.message_spelled([](std::string_view o) { return "--" + std::string(o); });
}

}  // namespace

TEST_CASE("each vocabulary: every name parses to its value; canonical names name it back; aliases are not listed") {
  check_round_trip(kEngineNames);
  check_round_trip(kKvDtypeNames);
  check_round_trip(kAttentionNames);
  check_round_trip(kTrainMethodNames);
  check_round_trip(kOptimizerNames);
  check_round_trip(kWeightQuantNames);
  check_round_trip(plan::kStrategyNames);
  CHECK(name_list(kEngineNames) == "transformers, vllm, llama.cpp");
  CHECK(name_list(kEngineNames, Engine::kVllm) == "transformers, vllm (default), llama.cpp");
  CHECK(name_list(kKvDtypeNames) == "float32, float16, bfloat16, float8, int8");
  CHECK(name_list(kAttentionNames) == "sdpa, eager");
  CHECK(name_list(kTrainMethodNames) == "full, lora, qlora");
  CHECK(name_list(kOptimizerNames) == "adamw, adamw8bit, adafactor, sgd");
  CHECK(plan::strategy_list() == "auto, balanced, balanced_low_0, sequential, fit");
  CHECK(engine_name(Engine::kLlamaCpp) == "llama.cpp");
  CHECK(value_of(kEngineNames, "hf") == Engine::kTransformers);
  CHECK(value_of(kOptimizerNames, "paged_adamw_8bit") == Optimizer::kAdamW8bit);
  CHECK(value_of(kKvDtypeNames, "q8_0") == KvDtype::kI8);
  CHECK_FALSE(value_of(kAttentionNames, "flash3").has_value());
}

TEST_CASE("parse_name: an unknown value names the option and lists the choices, the option marked") {
  try {
    parse_name(kOptimizerNames, "lion", "train.optimizer");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidArgument);
    CHECK(e.message() == "train.optimizer: unknown value 'lion' (adamw, adamw8bit, adafactor, sgd)");
    CHECK(spelled_as_flags(e) == "--train.optimizer: unknown value 'lion' (adamw, adamw8bit, adafactor, sgd)");
  }
  CHECK(parse_name(kTrainMethodNames, "qlora", "train.method") == TrainMethod::kQlora);
  CHECK(plan::parse_strategy("balanced_low_0", "strategy") == plan::Strategy::kBalancedLow0);
  try {
    plan::parse_strategy("greedy", "strategy");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.message() == "strategy: unknown value 'greedy' (auto, balanced, balanced_low_0, sequential, fit)");
  }
}

TEST_CASE("weights dtype: a quantization name first, then any floating dtype") {
  CHECK(parse_weight_dtype("fp8", "dtype").quant == WeightQuant::kFp8);  // not float8_e4m3fn weights
  CHECK(parse_weight_dtype("float8", "dtype").quant == WeightQuant::kFp8);
  CHECK(parse_weight_dtype("nf4", "dtype").quant == WeightQuant::kNf4);
  CHECK(parse_weight_dtype("bf16", "dtype").floating == DType::kBF16);
  CHECK(parse_weight_dtype("float64", "dtype").floating == DType::kF64);
  CHECK_FALSE(parse_weight_dtype("float16", "dtype").quant.has_value());
  CHECK_THROWS_AS(parse_weight_dtype("int32", "dtype"), Error);
  CHECK(weight_dtype_list() == "float32, float16, bfloat16, int8, int4, nf4, fp4, fp8, q8_0, q4_0");
  CHECK(quant_scheme_for(WeightQuant::kInt8).method == QuantMethod::kBnb8);
  CHECK(quant_scheme_for(WeightQuant::kInt8, /*gguf=*/true).method == QuantMethod::kGgufQ8_0);
  CHECK(quant_scheme_for(WeightQuant::kFp4).method == QuantMethod::kBnb4);
}

TEST_CASE("one set of defaults: RunOptions, TrainingOptions and plan requests start from kRunDefaults") {
  const RunOptions ro;
  CHECK_FALSE(ro.context.has_value());
  CHECK(ro.batch == kRunDefaults.batch);
  CHECK(ro.engine == kRunDefaults.engine);
  CHECK(ro.attention == kRunDefaults.attention);
  CHECK(ro.overhead_bytes == kRunDefaults.overhead_bytes);
  CHECK(ro.gpu_memory_utilization == kRunDefaults.gpu_memory_utilization);
  const TrainingOptions to;
  CHECK(to.method == kRunDefaults.train_method);
  CHECK(to.rank == kRunDefaults.rank);
  CHECK(to.targets == std::vector<std::string>{std::string(kRunDefaults.targets)});
  CHECK(to.optimizer == kRunDefaults.optimizer);
  CHECK(to.gpus == kRunDefaults.gpus);
  CHECK(to.zero_stage == kRunDefaults.zero_stage);
  const plan::PlanRequest pr;
  CHECK(pr.context == static_cast<std::uint64_t>(kRunDefaults.context));
  CHECK(pr.batch == static_cast<std::uint64_t>(kRunDefaults.batch));
  CHECK(pr.overhead_bytes == static_cast<std::uint64_t>(kRunDefaults.overhead_bytes));
  CHECK(plan::FitOptions{}.overhead_bytes == pr.overhead_bytes);
  // The values the CLI has always used (its outputs must not change).
  CHECK(kRunDefaults.context == 4096);
  CHECK(kRunDefaults.overhead_bytes == 500.0 * 1024 * 1024);
  CHECK(kRunDefaults.rank == 8);
}

TEST_CASE("OptionMessage: each option name is recorded where it sits, so a face can respell it") {
  const Error e = OptionMessage().option("gpu").text(" 'gpu' is unknown; give ").option("vram").text(" instead").error();
  CHECK(e.message() == "gpu 'gpu' is unknown; give vram instead");
  CHECK(spelled_as_flags(e) == "--gpu 'gpu' is unknown; give --vram instead");  // the quoted value is untouched
  const Error plain(ErrorCode::kInternal, "no options here");
  CHECK(spelled_as_flags(plain) == "no options here");
  CHECK(spelled_as_flags(option_error("context", " must be between 1 and 2")) == "--context must be between 1 and 2");
}
