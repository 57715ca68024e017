#include "memfit/plan/strategy.h"

#include <fmt/format.h>

#include "memfit/error.h"

namespace memfit::plan {

std::string_view strategy_name(Strategy s) {
  switch (s) {
    case Strategy::kAuto: return "auto";
    case Strategy::kBalanced: return "balanced";
    case Strategy::kBalancedLow0: return "balanced_low_0";
    case Strategy::kSequential: return "sequential";
    case Strategy::kFit: return "fit";
  }
  return "auto";
}

std::optional<Strategy> strategy_from_name(std::string_view name) {
  for (Strategy s : kStrategies)
    if (strategy_name(s) == name) return s;
  return std::nullopt;
}

std::string strategy_list() {
  std::string out;
  for (Strategy s : kStrategies) out.append(out.empty() ? "" : ", ").append(strategy_name(s));
  return out;
}

Strategy parse_strategy(std::string_view name, std::string_view what) {
  if (auto s = strategy_from_name(name)) return *s;
  throw Error(ErrorCode::kInvalidArgument,
              fmt::format("{}: '{}' is not one of {}", what, name, strategy_list()));
}

}  // namespace memfit::plan
