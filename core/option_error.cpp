#include "memfit/option_error.h"

#include <fmt/format.h>

namespace memfit {

OptionMessage& OptionMessage::option(std::string_view name) {
  options_.push_back(OptionSpan{message_.size(), name.size()});
  message_.append(name);
  return *this;
}

OptionMessage& OptionMessage::text(std::string_view text) {
  message_.append(text);
  return *this;
}

Error OptionMessage::error(ErrorCode code) const { return Error(code, message_, options_); }

Error option_error(std::string_view option, std::string_view rest, ErrorCode code) {
  return OptionMessage().option(option).text(rest).error(code);
}

Error unknown_value_error(std::string_view option, std::string_view value, std::string_view choices) {
  return option_error(option, fmt::format(": unknown value '{}' ({})", value, choices));
}

}  // namespace memfit
