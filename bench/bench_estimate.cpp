// In-process cost of an estimate: config text → tensor tree → sizes → report, per config.
// Configs: examples/configs and tests/fixtures/configs (real Hub configs), plus the reference
// configs when $MEMFIT_REFERENCE_DIR/configs exists.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "memfit/memory/estimate.h"

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void bench_config(benchmark::State& state, std::string text, std::string name, memfit::Mode mode) {
  memfit::EstimateRequest req;
  req.config_text = std::move(text);
  req.name = std::move(name);
  req.mode = mode;
  for (auto _ : state) {
    auto r = memfit::estimate(req);
    if (!r.ok()) {
      state.SkipWithError(r.error().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(r);
  }
}

void register_dir(const fs::path& dir, const std::string& prefix) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const std::string label = prefix + fs::relative(f, dir).string();
    const std::string text = slurp(f);
    benchmark::RegisterBenchmark(("accelerate/" + label).c_str(), bench_config, text, label,
                                 memfit::Mode::kAccelerate)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("memfit/" + label).c_str(), bench_config, text, label,
                                 memfit::Mode::kMemfit)->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_dir(fs::path(MEMFIT_SOURCE_DIR) / "examples/configs", "");
  register_dir(fs::path(MEMFIT_SOURCE_DIR) / "tests/fixtures/configs", "");
  if (const char* ref = std::getenv("MEMFIT_REFERENCE_DIR"))
    register_dir(fs::path(ref) / "configs", "reference/");
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
