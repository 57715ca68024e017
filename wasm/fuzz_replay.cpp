// wasm/fuzz_replay.cpp — the fuzz corpora replayed in WASM by one node program (one link of the
// core instead of one per target): `fuzz_replay_wasm TARGET DIR...` runs each input of DIR through
// TARGET's LLVMFuzzerTestOneInput (tests/fuzz/fuzz_TARGET.cpp, compiled with that function
// renamed memfit_fuzz_TARGET), as tests/fuzz/replay_main.cpp does natively.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int memfit_fuzz_safetensors(const std::uint8_t* data, std::size_t size);
extern "C" int memfit_fuzz_index(const std::uint8_t* data, std::size_t size);
extern "C" int memfit_fuzz_config(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  using Target = int (*)(const std::uint8_t*, std::size_t);
  const struct { const char* name; Target fn; } targets[] = {
      {"safetensors", memfit_fuzz_safetensors}, {"index", memfit_fuzz_index}, {"config", memfit_fuzz_config}};
  Target target = nullptr;
  for (const auto& t : targets)
    if (argc > 1 && std::strcmp(argv[1], t.name) == 0) target = t.fn;
  if (!target) {
    std::fprintf(stderr, "usage: fuzz_replay_wasm safetensors|index|config DIR_OR_FILE...\n");
    return 2;
  }
  std::size_t count = 0;
  for (int i = 2; i < argc; ++i) {
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(argv[i])) {
      for (const auto& e : std::filesystem::directory_iterator(argv[i]))
        if (e.is_regular_file()) files.push_back(e.path());
    } else {
      files.emplace_back(argv[i]);
    }
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      target(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
      ++count;
    }
  }
  std::printf("replayed %zu inputs\n", count);
  return count > 0 ? 0 : 1;
}
