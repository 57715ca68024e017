// Shared by the api_*.cpp files: the model fields every request carries, and error replies.
#pragma once

#include <string>

#include "memfit/error.h"
#include "memfit/format/json_dump.h"
#include "memfit/memory/estimate.h"
#include "memfit/model/config.h"

namespace memfit::api {

// Parses the request text (strict JSON, an object); throws Error(kInvalidArgument) otherwise.
Json parse_request(const std::string& request_json);
// config/name/library/mode/class/checkpoint/source/dtypes of a request (see docs/api.md).
EstimateRequest model_request(const Json& request);
// {"error": {"code", "message"}} as text.
std::string error_reply(const Error& e);

// Runs fn(request) → Json, turning any failure into an error reply. A function pointer, not a
// template: the WebAssembly module carries this exception handling once for every call.
std::string respond(const std::string& request_json, Json (*fn)(const Json& request));

}  // namespace memfit::api
