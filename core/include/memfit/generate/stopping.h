// memfit/generate/stopping.h — when generation ends: the EOS ids (generation_config.json's or
// config.json's eos_token_id, an integer or a list) and stop strings (`--stop STR`) found in the
// decoded text, with how much of the text can be streamed before a stop string could still start.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "memfit/error.h"

namespace memfit::generate {

// The EOS ids generate() stops at, sorted and distinct. As transformers' model.generation_config:
// generation_config.json's eos_token_id when that file is given (pass nullptr when there is none)
// and sets the key (not null); else config.json's eos_token_id, else its text_config's (composite
// models). Empty when none sets it. kWrongType naming the file and key for anything but a
// non-negative integer or a list of them.
Result<std::vector<std::int64_t>> eos_token_ids(const nlohmann::json* generation_config, const nlohmann::json& config);

struct StopMatch {
  bool found = false;
  std::size_t cut = 0;    // where the stop string begins: keep text[0, cut)
  std::size_t which = 0;  // its index in the list
};

// The earliest stop string in text (the first listed on a tie). Empty stop strings never match.
// `search_from`: where a new match can begin at the earliest — after appending a token's text at
// offset n, pass n minus (the longest stop string's length − 1) so earlier text is not scanned again.
StopMatch find_stop(std::string_view text, const std::vector<std::string>& stops, std::size_t search_from = 0);

// How many bytes of text can be streamed now: all but a tail that is the start of some stop
// string (it may still complete into one) or an incomplete UTF-8 sequence (its next bytes are in
// the next token).
std::size_t printable_length(std::string_view text, const std::vector<std::string>& stops);

}  // namespace memfit::generate
