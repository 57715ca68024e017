// memfit/report/run_report.h — a RunReport (memfit/memory/will_it_run.h) as the --json object and
// as the CLI's text.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "memfit/memory/will_it_run.h"

namespace memfit {

// {"inference": {...}, "training": {...}?, "fit": {...}?} (docs/memory-model.md lists the fields).
nlohmann::ordered_json run_report_to_json(const RunReport& report);
// The CLI's text form: one block per part, each figure with its parts.
std::string render_run_report(const RunReport& report);

}  // namespace memfit
