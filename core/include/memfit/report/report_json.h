// memfit/report/report_json.h — the --json form of a report.
#pragma once

#include <nlohmann/json.hpp>

#include "memfit/memory/estimate.h"

namespace memfit {

nlohmann::ordered_json report_to_json(const Report& report);
nlohmann::ordered_json comparison_to_json(const TreeComparison& comparison);
nlohmann::json error_to_json(const Error& error);  // {"code": "...", "message": "..."}

}  // namespace memfit
