// wasm/bindings.cpp — the WebAssembly face of memfit: exactly the functions of memfit/api/api.h
// (its MEMFIT_API_FUNCTIONS list), strings in and strings out. No logic lives here (squoosh's
// thin embind layer): every call returns the api's JSON text, and failures already come back as
// {"error": {"code", "message"}}.
//
// parse_safetensors_header takes raw bytes: pass a Uint8Array (embind copies it byte for byte
// into the std::string); a JS string would be re-encoded as UTF-8.
#include <emscripten/bind.h>

#include "memfit/api/api.h"

EMSCRIPTEN_BINDINGS(memfit) {
#define MEMFIT_BIND(name, params) emscripten::function(#name, &memfit::api::name);
  MEMFIT_API_FUNCTIONS(MEMFIT_BIND)
#undef MEMFIT_BIND
}
