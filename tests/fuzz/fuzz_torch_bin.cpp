// libFuzzer target: a .bin checkpoint (zip directory + restricted unpickler) must reject any input
// cleanly — no crash, no sanitizer report, bounded memory — and what it accepts must be consistent.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "memfit/torch_bin.h"
#include "memfit/torch_pickle.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // The whole input as an archive…
  const auto ck = memfit::torch_bin::read(memfit::zip::memory_source(bytes, "fuzz.bin"));
  if (ck.ok())
    for (const auto& t : ck->tensors) {
      // every accepted view lies inside the input
      if (t.data_offset > size || t.span_bytes > size - t.data_offset) __builtin_trap();
      if (t.contiguous && t.span_bytes != t.nbytes) __builtin_trap();
    }
  // …and as a bare pickle, so the unpickler is fuzzed without a valid zip around it.
  (void)memfit::torch_pickle::load_state_dict(bytes, "fuzz.pkl");
  return 0;
}
