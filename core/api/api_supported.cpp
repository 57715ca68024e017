// supported(): what a client may offer — the api's functions, the model families, and the
// choices of every request field that takes a name (docs/api.md) — each from the core table that
// parses it, so a page offers exactly what the api accepts. kLists is the one place that lists
// them: a name table core gains is one more row there.
#include <cstddef>
#include <iterator>
#include <string_view>

#include "api_common.h"
#include "memfit/api/api.h"
#include "memfit/memory/gpu_catalog.h"
#include "memfit/memory/kv_cache.h"
#include "memfit/memory/training.h"
#include "memfit/model/arch.h"
#include "memfit/plan/strategy.h"

namespace memfit::api {
namespace {

#define MEMFIT_API_NAME(name, params) #name,
constexpr const char* kFunctions[] = {MEMFIT_API_FUNCTIONS(MEMFIT_API_NAME)};
#undef MEMFIT_API_NAME

// The values of the enums core has no list of yet, each named by core's own *_name().
constexpr KvDtype kKvDtypes[] = {KvDtype::kF32, KvDtype::kF16, KvDtype::kBF16, KvDtype::kF8, KvDtype::kI8};
constexpr Engine kEngines[] = {Engine::kTransformers, Engine::kVllm, Engine::kLlamaCpp};
constexpr TrainMethod kTrainMethods[] = {TrainMethod::kFull, TrainMethod::kLora, TrainMethod::kQlora};
constexpr Optimizer kOptimizers[] = {Optimizer::kAdamW, Optimizer::kAdamW8bit, Optimizer::kAdafactor,
                                     Optimizer::kSgd};
// The weights' dtypes of an inference request ("dtype"): torch's float types and the quantized
// formats will_it_run sizes (it also takes llama.cpp's q8_0 / q4_0, int8 / int4 under that engine).
constexpr const char* kWeightDtypes[] = {"float32", "float16", "bfloat16", "int8", "int4", "nf4", "fp4", "fp8"};

// A reply key and its list: `count` names, name(i) for each (a table, so the WebAssembly module
// carries one loop for every list).
struct NameList {
  const char* key;
  std::size_t count;
  std::string_view (*name)(std::size_t i);
};

constexpr NameList kLists[] = {
    {"functions", std::size(kFunctions), [](std::size_t i) -> std::string_view { return kFunctions[i]; }},
    {"weight_dtypes", std::size(kWeightDtypes), [](std::size_t i) -> std::string_view { return kWeightDtypes[i]; }},
    {"kv_dtypes", std::size(kKvDtypes), [](std::size_t i) { return kv_dtype_name(kKvDtypes[i]); }},
    {"strategies", std::size(plan::kStrategies), [](std::size_t i) { return plan::strategy_name(plan::kStrategies[i]); }},
    {"engines", std::size(kEngines), [](std::size_t i) { return engine_name(kEngines[i]); }},
    {"train_methods", std::size(kTrainMethods), [](std::size_t i) { return train_method_name(kTrainMethods[i]); }},
    {"optimizers", std::size(kOptimizers), [](std::size_t i) { return optimizer_name(kOptimizers[i]); }},
};

// Core's GPU catalogue: name, the short names find_gpu also accepts, memory as marketed.
Json gpus() {
  Json out = Json::array();
  for (const GpuSpec& g : gpu_catalog()) {
    Json gpu;
    gpu["name"] = std::string(g.name);
    Json& aliases = gpu["aliases"] = Json::array();
    for (auto a : g.aliases) aliases.push_back(std::string(a));
    gpu["memory_bytes"] = static_cast<std::uint64_t>(g.memory_bytes);
    out.push_back(std::move(gpu));
  }
  return out;
}

}  // namespace

std::string supported() {
  Json out;
  out["transformers"] = Json::array();
  out["timm"] = Json::array();
  for (const Family* f : families())
    for (auto k : family_keys(*f)) out[std::string(f->library)].push_back(std::string(k));
  for (const NameList& list : kLists) {
    Json& names = out[list.key] = Json::array();
    for (std::size_t i = 0; i < list.count; ++i) names.push_back(std::string(list.name(i)));
  }
  // the estimate's rows by mode: each mode's default, and all it accepts
  Json& dtypes = out["dtypes"];
  dtypes["memfit"] = estimate_dtypes(Mode::kMemfit);
  dtypes["accelerate"] = estimate_dtypes(Mode::kAccelerate);
  out["gpus"] = gpus();
  return out.dump();
}

}  // namespace memfit::api
