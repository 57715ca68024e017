// core/api/api_plan_request.h — the plan request's fields, shared by plan() on one host and on
// several (api_pipeline.cpp).
#pragma once

#include <string>

#include "api_common.h"
#include "memfit/plan/plan.h"

namespace memfit::api {

// Every plan field but the budgets (`max_memory` or `nodes`).
plan::PlanRequest plan_request(const Json& j);
// A string field's value, "" when absent; Error(kInvalidArgument) naming it when not a string.
std::string string_field(const Json& j, const char* key);
// plan() with `nodes`: `memfit plan --nodes --json`'s reply.
Json pipeline_plan(const Json& j);

}  // namespace memfit::api
