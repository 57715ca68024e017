// Replays a fuzz corpus through a target in ordinary builds (no libFuzzer): every committed
// input must still be handled without a crash, a sanitizer report or a hang.
#include <cstdio>

#include "replay_corpus.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  const std::size_t count = memfit::fuzz::replay_corpus(argv + 1, argc - 1, LLVMFuzzerTestOneInput);
  std::printf("replayed %zu inputs\n", count);
  return count > 0 ? 0 : 1;
}
