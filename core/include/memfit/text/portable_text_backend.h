// memfit/text/portable_text_backend.h — a TextBackend in portable C++ (no library, no I/O): its
// own regex engine for tokenizer.json patterns (Oniguruma's meaning) and Unicode tables generated
// into the source (scripts/gen-unicode-tables.py). It serves where PCRE2 and utf8proc are not at
// hand — the page's WebAssembly text module — and is held to the native backend by the tests.
// Patterns it does not support fail to compile with kInvalidValue naming the construct.
#pragma once

#include <memory>

#include "memfit/tokenizer/text_backend.h"

namespace memfit::text {

std::shared_ptr<const tokenizer::TextBackend> portable_text_backend();
// The Unicode version of its tables ("14.0.0").
const char* portable_unicode_version();

}  // namespace memfit::text
