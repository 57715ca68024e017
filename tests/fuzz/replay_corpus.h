// tests/fuzz/replay_corpus.h — replays fuzz inputs (files, or every file of a folder) through a
// target; shared by the native replay (replay_main.cpp) and the WASM one (wasm/fuzz_replay.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace memfit::fuzz {

using Target = int (*)(const std::uint8_t* data, std::size_t size);

// Runs every input named by paths[0..count) through `target`; returns how many ran.
inline std::size_t replay_corpus(char** paths, int count, Target target) {
  std::size_t replayed = 0;
  for (int i = 0; i < count; ++i) {
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(paths[i])) {
      for (const auto& e : std::filesystem::directory_iterator(paths[i]))
        if (e.is_regular_file()) files.push_back(e.path());
    } else {
      files.emplace_back(paths[i]);
    }
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      target(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
      ++replayed;
    }
  }
  return replayed;
}

}  // namespace memfit::fuzz
