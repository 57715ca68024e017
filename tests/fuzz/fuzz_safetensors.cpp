// libFuzzer target: the safetensors header parser must reject any input cleanly.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "memfit/format/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto h = memfit::safetensors::parse(bytes, size >= 8 ? std::optional<std::uint64_t>(size) : std::nullopt, "fuzz");
  (void)memfit::safetensors::parse(bytes, std::nullopt, "fuzz");
  if (h.ok() && h->tensors.size() < 64) {
    // What parses must re-serialise to something that parses to the same tensors.
    const std::string again = memfit::safetensors::write_header(h->tensors, h->metadata);
    auto h2 = memfit::safetensors::parse(again, again.size() + h->data_size, "fuzz-roundtrip");
    if (!h2.ok() || h2->tensors.size() != h->tensors.size()) __builtin_trap();
  }
  return 0;
}
