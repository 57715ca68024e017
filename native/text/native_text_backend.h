// native/text/native_text_backend.h — core's TextBackend on PCRE2 and utf8proc.
#pragma once

#include <memory>

#include "memfit/tokenizer/text_backend.h"

namespace memfit::text {

// One shared backend for the process (stateless; safe from several threads).
std::shared_ptr<const tokenizer::TextBackend> native_text_backend();

}  // namespace memfit::text
