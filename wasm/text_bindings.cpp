// wasm/text_bindings.cpp — the page's text module (memfit-text.wasm): memfit/text/text_api.h
// through embind, strings in and strings out; errors come back as {"error": {code, message}}.
#include <emscripten/bind.h>

#include "memfit/text/text_api.h"

EMSCRIPTEN_BINDINGS(memfit_text) {
  emscripten::function("tokenize", &memfit::text::tokenize);
  emscripten::function("tokenize_again", &memfit::text::tokenize_again);
}
