// core/format/safetensors_fast.h — the allocation-light fast path of safetensors::parse_header
// (internal to core). nullopt means "not the common well-formed case": the strict parser then
// runs and reports the exact error.
#pragma once

#include <optional>
#include <string_view>

#include "memfit/format/safetensors.h"

namespace memfit::safetensors {

// Tensors (in header order) and metadata of a well-formed header whose every entry passes the
// per-entry checks and whose names are unique; tiling and file size are not checked here.
std::optional<Header> parse_header_fast(std::string_view header_json);

}  // namespace memfit::safetensors
