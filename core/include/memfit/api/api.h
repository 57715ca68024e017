// memfit/api/api.h — the JSON-in / JSON-out face of the core, shared by the WASM layer (and any
// other binding). Each call takes a request JSON text and returns a response JSON text; it never
// throws: failures come back as {"error": {"code": "...", "message": "..."}}.
// The request/response fields are documented in docs/api.md.
#pragma once

#include <string>

// The api's functions, written once: X(name, parameters) for each. This header declares them,
// wasm/bindings.cpp exports each under its name, and supported() lists the names (the web
// worker calls exactly these), so a new function is one line here plus its definition.
#define MEMFIT_API_FUNCTIONS(X)                                              \
  X(estimate, (const std::string& request_json))  /* api_estimate.cpp */   \
  X(plan, (const std::string& request_json))      /* api_plan.cpp */       \
  X(inference, (const std::string& request_json)) /* api_inference.cpp */  \
  /* bytes: the file's first 8 + N bytes; file_size < 0 when unknown */     \
  X(parse_safetensors_header, (const std::string& bytes, double file_size)) \
  /* Hub repos that are not one model: needs or report (api_repo.cpp) */    \
  X(repo, (const std::string& request_json))                                \
  /* what a client may offer: families, dtypes, GPUs, … (api_supported.cpp) */ \
  X(supported, ())

namespace memfit::api {

#define MEMFIT_API_DECLARE(name, params) std::string name params;
MEMFIT_API_FUNCTIONS(MEMFIT_API_DECLARE)
#undef MEMFIT_API_DECLARE

}  // namespace memfit::api
