// native/text/load_tokenizer.h — a model's tokenizer from disk: PATH is a tokenizer.json or a
// SentencePiece *.model, or a folder with tokenizer.json, else GPT-2's vocab.json + merges.txt,
// else tokenizer.model (with tokenizer_config.json beside it, when there is one). Failures are memfit::Failure
// (kFile: nothing readable there; kInvalidInput: a malformed file).
#pragma once

#include <string>

#include "memfit/tokenizer/tokenizer.h"

namespace memfit::text {

tokenizer::Tokenizer load_tokenizer(const std::string& path);

}  // namespace memfit::text
