// core/tokenizer/tokenizer_build.h — a Tokenizer from tokenizer.json's parsed root object: what
// Tokenizer::from_json does after parsing, shared with the tokenizer.model converter
// (sentencepiece_convert.cpp), which builds the same root object from a ModelProto.
#pragma once

#include <memory>
#include <string>

#include "components.h"

namespace memfit::tokenizer {

// Throws memfit::Error naming `source` and the component's path.
Tokenizer tokenizer_from_root(const json& root, std::shared_ptr<const TextBackend> backend, const std::string& source);

}  // namespace memfit::tokenizer
