// Planning Meta-Llama-3-70B and Mixtral-8x7B for 8 GPUs + CPU + disk, each strategy, in process
// (tree building included, as `memfit plan` does it).
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "memfit/plan/plan.h"

namespace {

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void bench_plan(benchmark::State& state, const std::string& config, const std::string& strategy) {
  memfit::plan::PlanRequest req;
  req.model.config_text = slurp(std::string(MEMFIT_SOURCE_DIR) + "/" + config);
  req.model.name = config;
  req.model.mode = memfit::Mode::kAccelerate;
  req.max_memory = *memfit::plan::parse_max_memory(
      "0=10GiB,1=10GiB,2=10GiB,3=10GiB,4=10GiB,5=10GiB,6=10GiB,7=10GiB,cpu=32GiB");
  req.strategy = *memfit::plan::strategy_from_name(strategy);
  req.dtype = memfit::DType::kF16;
  for (auto _ : state) {
    auto r = memfit::plan::run_plan(req);
    if (!r.ok()) {
      state.SkipWithError(r.error().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(r);
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (const char* model : {"examples/configs/meta-llama--Meta-Llama-3-70B.json",
                            "tests/fixtures/configs/mistralai--Mixtral-8x7B-v0.1.json"})
    for (const char* s : {"auto", "balanced", "balanced_low_0", "sequential", "fit"})
      benchmark::RegisterBenchmark((std::string(s) + "/" + model).c_str(), bench_plan,
                                   std::string(model), std::string(s))
          ->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
