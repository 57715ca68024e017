// libFuzzer target: a .bin checkpoint (zip directory + restricted unpickler) must reject any input
// cleanly — no crash, no sanitizer report, bounded memory — and what it accepts must be consistent.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "memfit/format/torch_bin.h"
#include "memfit/format/torch_pickle.h"

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
  // The metadata-only reader (the Hub's, by HTTP Range) accepts what the full reader accepts,
  // with the same tensors (its checks are a subset of the full reader's).
  const auto md = memfit::torch_bin::read_metadata(memfit::zip::memory_source(bytes, "fuzz.bin"));
  if (ck.ok()) {
    if (!md.ok() || md->tensors.size() != ck->tensors.size()) __builtin_trap();
    for (std::size_t i = 0; i < md->tensors.size(); ++i)
      if (md->tensors[i].name != ck->tensors[i].name || md->tensors[i].nbytes != ck->tensors[i].nbytes)
        __builtin_trap();
  }
  // …and as a bare pickle, so the unpickler is fuzzed without a valid zip around it.
  (void)memfit::torch_pickle::load_state_dict(bytes, "fuzz.pkl");
  return 0;
}
