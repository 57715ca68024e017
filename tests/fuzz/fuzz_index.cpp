// libFuzzer target: sharded checkpoint index parsing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "memfit/format/checkpoint_index.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto index = memfit::parse_index(text, "fuzz.index.json");
  if (index.ok()) (void)memfit::check_index_against_shards(*index, {}, "fuzz.index.json");
  return 0;
}
