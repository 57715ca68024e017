// libFuzzer target: the GGUF header parser must reject any input cleanly, and what it accepts
// must write back to a header that parses to the same metadata and tensors.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "memfit/format/gguf.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto f = memfit::gguf::parse(bytes, "fuzz");
  (void)memfit::gguf::parse(bytes, "fuzz-larger", size + 4096);  // as a prefix of a larger file
  if (f.ok()) {
    std::string again = memfit::gguf::write_header(f->version, f->metadata, f->tensors, f->alignment);
    again.resize(again.size() + f->data_size, '\0');
    auto g = memfit::gguf::parse(again, "fuzz-roundtrip");
    if (!g.ok() || g->tensors.size() != f->tensors.size() || g->metadata.size() != f->metadata.size() ||
        g->tensor_bytes() != f->tensor_bytes())
      __builtin_trap();
  }
  return 0;
}
