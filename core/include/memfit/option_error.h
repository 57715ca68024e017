// memfit/option_error.h — error messages that name options of a request. Core names an option
// as the JSON API does ("context", "kv_dtype", "train.method"), never as a CLI flag; the message
// records where each name sits so that the CLI can print its flag there instead.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "memfit/error.h"

namespace memfit {

// OptionMessage().option("gpu").text(" 'X' is not in the catalogue; give ").option("vram")
//   .text(" instead").error()
class OptionMessage {
 public:
  OptionMessage& option(std::string_view name);
  OptionMessage& text(std::string_view text);
  Error error(ErrorCode code = ErrorCode::kInvalidArgument) const;

 private:
  std::string message_;
  std::vector<OptionSpan> options_;
};

// "<option><rest>": the usual message about one option ("context must be between 1 and …").
Error option_error(std::string_view option, std::string_view rest, ErrorCode code = ErrorCode::kInvalidArgument);
// "engine: unknown value 'tgi' (transformers, vllm, llama.cpp)".
Error unknown_value_error(std::string_view option, std::string_view value, std::string_view choices);

}  // namespace memfit
