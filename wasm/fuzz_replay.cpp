// wasm/fuzz_replay.cpp — the fuzz corpora replayed in WASM by one node program (one link of the
// core instead of one per target): `fuzz_replay_wasm TARGET DIR...` runs each input of DIR through
// TARGET's LLVMFuzzerTestOneInput (tests/fuzz/fuzz_TARGET.cpp, compiled with that function
// renamed memfit_fuzz_TARGET), as tests/fuzz/replay_main.cpp does natively.
#include <cstdio>
#include <cstring>

#include "fuzz/replay_corpus.h"

extern "C" int memfit_fuzz_safetensors(const std::uint8_t* data, std::size_t size);
extern "C" int memfit_fuzz_index(const std::uint8_t* data, std::size_t size);
extern "C" int memfit_fuzz_config(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  using memfit::fuzz::Target;
  const struct { const char* name; Target fn; } targets[] = {
      {"safetensors", memfit_fuzz_safetensors}, {"index", memfit_fuzz_index}, {"config", memfit_fuzz_config}};
  Target target = nullptr;
  for (const auto& t : targets)
    if (argc > 1 && std::strcmp(argv[1], t.name) == 0) target = t.fn;
  if (!target) {
    std::fprintf(stderr, "usage: fuzz_replay_wasm safetensors|index|config DIR_OR_FILE...\n");
    return 2;
  }
  const std::size_t count = memfit::fuzz::replay_corpus(argv + 2, argc - 2, target);
  std::printf("replayed %zu inputs\n", count);
  return count > 0 ? 0 : 1;
}
