// libFuzzer target: a precompiled_charsmap blob (the Precompiled normalizer's rules), then lookups
// of every 1..6-byte chunk of the same input in the trie it describes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "memfit/tokenizer/precompiled_charsmap.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto map = memfit::tokenizer::PrecompiledCharsmap::parse(bytes);
  if (!map.ok()) return 0;
  for (std::size_t at = 0; at < bytes.size(); ++at)
    for (std::size_t n = 1; n <= std::min<std::size_t>(6, bytes.size() - at); ++n) (void)map->transform(bytes.substr(at, n));
  return 0;
}
