// native/cli/option_flags.h — core names the options of a request as the JSON API does ("context",
// "kv_dtype", "train.method"); the CLI prints its flags in their place.
#pragma once

#include <string>
#include <string_view>

#include "cli_error.h"

namespace memfit::cli {

// "kv_dtype" → "--kv-dtype", "train.method" → "--train", "library" → "--library_name".
std::string flag_for(std::string_view option);

}  // namespace memfit::cli
