// memfit/report/report_json.h — the --json form of a report.
#pragma once

#include <nlohmann/json.hpp>

#include "memfit/memory/checkpoint_validation.h"
#include "memfit/memory/estimate.h"

namespace memfit {

nlohmann::ordered_json report_to_json(const Report& report);
nlohmann::ordered_json comparison_to_json(const TreeComparison& comparison);
// `memfit validate --json`: {"ok", "missing", "unexpected", "ignored", "shape_mismatches",
// "expected_total_size", "index_total_size" (null: the checkpoint states none), then
// "dtype_differences", "dtype", "prefix_note", "notes"}.
nlohmann::ordered_json validation_to_json(const CheckpointValidation& v);
nlohmann::json error_to_json(const Error& error);  // {"code": "...", "message": "..."}

}  // namespace memfit
