// memfit/format/json_dump.h — a JSON value as compact text, the same bytes as nlohmann's dump().
//
// Why not dump(): nlohmann checks every byte of every string through its UTF-8 decoder, and the
// replies of the api (memfit/api/api.h) are mostly strings that need no escaping — 2,000 module
// names for a 70B model. This writes a string that holds only printable ASCII other than '"' and
// '\' as it is, and hands anything else (other strings, and every float) to nlohmann, so the
// output stays byte-identical (tests/core/test_json_dump.cpp checks it against dump()). In the
// WebAssembly module that made the serializing part of an estimate ~4× faster.
#pragma once

#include <string>

#include "memfit/model/config.h"

namespace memfit {

std::string dump_json(const Json& value);

}  // namespace memfit
