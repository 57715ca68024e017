// native/cli/tokenize_command.h — `memfit tokenize`: text to token ids (and back) with a model's
// own tokenizer (tokenizer.json, or GPT-2's vocab.json + merges.txt).
#pragma once

#include <optional>
#include <string>

namespace memfit::cli {

struct TokenizeArgs {
  std::string path;                 // tokenizer.json or a model folder
  std::optional<std::string> text;  // --text; else stdin (or --jsonl lines)
  bool jsonl = false;               // one JSON string (or, with --decode, list of ids) per line
  bool no_special = false;          // encode without special tokens / decode skipping them
  bool decode = false;              // ids in, text out
  bool json = false;                // print JSON
};
int run_tokenize(const TokenizeArgs& args);

}  // namespace memfit::cli
