// core/text/normalize.h — Unicode normalization (UAX #15: NFC, NFD, NFKC, NFKD) over the
// generated tables: full decomposition, canonical ordering, canonical composition.
#pragma once

#include <string>
#include <string_view>

#include "memfit/tokenizer/text_backend.h"

namespace memfit::text {

// `utf8` is valid UTF-8; so is the result.
std::string normalize_utf8(std::string_view utf8, tokenizer::NormalForm form);

}  // namespace memfit::text
