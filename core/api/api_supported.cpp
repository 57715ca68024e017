// supported(): what a client may offer — the api's functions, the model families, and the
// choices of every request field that takes a name (docs/api.md) — each from the core table that
// parses it, so a page offers exactly what the api accepts. kLists is the one place that lists
// them: a name table core gains is one more row there.
#include <string>

#include "api_common.h"
#include "memfit/api/api.h"
#include "memfit/memory/gpu_catalog.h"
#include "memfit/memory/options.h"
#include "memfit/model/arch.h"
#include "memfit/plan/strategy.h"

namespace memfit::api {
namespace {

#define MEMFIT_API_NAME(name, params) #name,
constexpr const char* kFunctions[] = {MEMFIT_API_FUNCTIONS(MEMFIT_API_NAME)};
#undef MEMFIT_API_NAME

// A name table's canonical names (its aliases are accepted, never offered).
template <auto& Table>
void table_names(Json& out) {
  for (const auto& row : Table)
    if (!row.alias) out.push_back(std::string(row.name));
}

void function_names(Json& out) {
  for (const char* f : kFunctions) out.push_back(f);
}

// The weights' dtypes of an inference request ("dtype"): the floating dtypes, then the
// quantized formats will_it_run sizes — parse_weight_dtype's own two tables.
void weight_dtype_names(Json& out) {
  table_names<kWeightFloatNames>(out);
  table_names<kWeightQuantNames>(out);
}

// A reply key and the function that lists its names.
struct NameList {
  const char* key;
  void (*names)(Json& out);
};

constexpr NameList kLists[] = {
    {"functions", &function_names},
    {"weight_dtypes", &weight_dtype_names},
    {"kv_dtypes", &table_names<kKvDtypeNames>},
    {"strategies", &table_names<plan::kStrategyNames>},
    {"engines", &table_names<kEngineNames>},
    {"train_methods", &table_names<kTrainMethodNames>},
    {"optimizers", &table_names<kOptimizerNames>},
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
  for (const NameList& list : kLists) list.names(out[list.key] = Json::array());
  // the estimate's rows by mode: each mode's default, and all it accepts
  Json& dtypes = out["dtypes"];
  dtypes["memfit"] = estimate_dtypes(Mode::kMemfit);
  dtypes["accelerate"] = estimate_dtypes(Mode::kAccelerate);
  out["gpus"] = gpus();
  return out.dump();
}

}  // namespace memfit::api
