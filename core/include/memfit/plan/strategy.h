// memfit/plan/strategy.h — the device-map strategies, named once. The CLI's --device-map choices,
// the loader's map spec, the JSON API's "strategy" and supported()'s list all come from here.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace memfit::plan {

enum class Strategy {
  kAuto,          // accelerate: balanced over the GPUs (auto == balanced)
  kBalanced,
  kBalancedLow0,  // balanced, GPU 0 kept as empty as possible (it runs generate)
  kSequential,    // infer_auto_device_map on the budgets as given
  kFit,           // memfit's planner: KV cache, activations and overhead budgeted per GPU
};

inline constexpr Strategy kStrategies[] = {Strategy::kAuto, Strategy::kBalanced, Strategy::kBalancedLow0,
                                           Strategy::kSequential, Strategy::kFit};

std::string_view strategy_name(Strategy s);  // "auto", "balanced", "balanced_low_0", ...
std::optional<Strategy> strategy_from_name(std::string_view name);
// "auto, balanced, balanced_low_0, sequential, fit" (for messages and help).
std::string strategy_list();
// Strategy from a name, or Error(kInvalidArgument) naming `what` (the option) and the choices.
Strategy parse_strategy(std::string_view name, std::string_view what);

}  // namespace memfit::plan
