// native/option_flags.h — core names the options of a request as the JSON API does ("context",
// "kv_dtype", "train.method"); the CLI prints its flags in their place.
#pragma once

#include <string>
#include <string_view>

#include "memfit/error.h"
#include "model_source.h"

namespace memfit::cli {

// "kv_dtype" → "--kv-dtype", "train.method" → "--train", "library" → "--library_name".
std::string flag_for(std::string_view option);
// The Error's message with each option it names spelled as the flag.
std::string cli_message(const Error& e);
// The exit code for the Error's code and its message as the CLI prints it.
CliError cli_error(const Error& e);

}  // namespace memfit::cli
