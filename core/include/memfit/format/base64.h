// memfit/format/base64.h — a strict base64 decoder (RFC 4648 §4, the standard alphabet with '='
// padding), for binary bytes that travel inside JSON: the api's `repo` takes GGUF headers so, and
// tokenizer.json's Precompiled normalizer holds its charsmap so (Rust's BASE64_STANDARD, which is
// canonical too).
//
// Strict, because the text comes from a caller across a boundary: the length is a multiple of
// 4, padding only at the end (one or two '='), no whitespace, no URL-safe alphabet, and the bits
// the padding leaves over are zero (one text per byte string, as RFC 4648 §3.5 allows a decoder
// to require). Any failure is Error(kInvalidArgument, as for every malformed request field)
// naming `what`, the position and the reason.
#pragma once

#include <string>
#include <string_view>

#include "memfit/error.h"

namespace memfit {

// The bytes `text` encodes; `what` names it in errors ("binaries['m.gguf']").
Result<std::string> base64_decode(std::string_view text, std::string_view what);
// The canonical text of `bytes` (padded).
std::string base64_encode(std::string_view bytes);

}  // namespace memfit
