// memfit/api/api.h — the JSON-in / JSON-out face of the core, shared by the WASM layer (and any
// other binding). Each call takes a request JSON text and returns a response JSON text; it never
// throws: failures come back as {"error": {"code": "...", "message": "..."}}.
// The request/response fields are documented in docs/api.md.
#pragma once

#include <string>

namespace memfit::api {

std::string estimate(const std::string& request_json);   // core/api/api_estimate.cpp
std::string plan(const std::string& request_json);       // core/api/api_plan.cpp
std::string inference(const std::string& request_json);  // core/api/api_inference.cpp
std::string parse_safetensors_header(const std::string& bytes, double file_size);  // api_estimate.cpp
std::string supported();  // {"transformers": [...model types], "timm": [...]}; api_estimate.cpp

}  // namespace memfit::api
