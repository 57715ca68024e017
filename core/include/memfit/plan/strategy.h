// memfit/plan/strategy.h — the device-map strategies, named once. The CLI's --device-map choices,
// the loader's map spec, the JSON API's "strategy" and supported()'s list all come from here.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "memfit/name_table.h"

namespace memfit::plan {

enum class Strategy {
  kAuto,          // accelerate: balanced over the GPUs (auto == balanced)
  kBalanced,
  kBalancedLow0,  // balanced, GPU 0 kept as empty as possible (it runs generate)
  kSequential,    // infer_auto_device_map on the budgets as given
  kFit,           // memfit's planner: KV cache, activations and overhead budgeted per GPU
};

inline constexpr NameRow<Strategy> kStrategyNames[] = {
    {"auto", Strategy::kAuto},
    {"balanced", Strategy::kBalanced},
    {"balanced_low_0", Strategy::kBalancedLow0},
    {"sequential", Strategy::kSequential},
    {"fit", Strategy::kFit},
};

inline std::string_view strategy_name(Strategy s) { return name_of(kStrategyNames, s); }
inline std::optional<Strategy> strategy_from_name(std::string_view name) { return value_of(kStrategyNames, name); }
// "auto, balanced, balanced_low_0, sequential, fit" (for messages and help).
inline std::string strategy_list() { return name_list(kStrategyNames); }
// Strategy from a name, or Error(kInvalidArgument) naming `option` and the choices.
inline Strategy parse_strategy(std::string_view name, std::string_view option) {
  return parse_name(kStrategyNames, name, option);
}

}  // namespace memfit::plan
