// wasm/bindings.cpp — the WebAssembly face of memfit: exactly the functions of memfit/api/api.h,
// strings in and strings out. No logic lives here (squoosh's thin embind layer): every call
// returns the api's JSON text, and failures already come back as {"error": {"code", "message"}}.
//
// parse_safetensors_header takes raw bytes: pass a Uint8Array (embind copies it byte for byte
// into the std::string); a JS string would be re-encoded as UTF-8.
#include <emscripten/bind.h>

#include "memfit/api/api.h"

EMSCRIPTEN_BINDINGS(memfit) {
  emscripten::function("estimate", &memfit::api::estimate);
  emscripten::function("plan", &memfit::api::plan);
  emscripten::function("inference", &memfit::api::inference);
  emscripten::function("parse_safetensors_header", &memfit::api::parse_safetensors_header);
  emscripten::function("supported", &memfit::api::supported);
}
