// memfit/text/text_api.h — the tokenizer as the page's text module calls it (wasm/text_bindings.cpp):
// strings in, the JSON text of the reply out, like memfit/api/api.h. Over the portable
// TextBackend, so it runs anywhere core does.
#pragma once

#include <string>

namespace memfit::text {

// tokenizer.encode(text, add_special_tokens=True) with the tokenizer.json `tokenizer_json`:
// {"ids": [...], "count": N}, or {"error": {"code", "message"}} (a tokenizer.json this build
// cannot read, a regex the portable engine does not support, text that is not UTF-8). The last
// tokenizer read is kept, so a caller counting as the user types passes the same file each time
// and only the text is tokenized again.
std::string tokenize(const std::string& tokenizer_json, const std::string& text);
// tokenize() with the tokenizer the last successful tokenize() read, without its file: copying a
// tokenizer.json of several MB into the module costs more than counting a prompt (the page's
// worker passes the file only when it changes). An error (invalid_argument) when none was read.
std::string tokenize_again(const std::string& text);

}  // namespace memfit::text
