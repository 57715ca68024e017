// tests/support/scratch_files.h — throwaway folders and files for tests that write checkpoints.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace memfit::test {

// A new empty folder /tmp/memfit-<what>-XXXXXX; the test removes it.
inline std::string scratch_dir(const std::string& what) {
  std::string tmpl = "/tmp/memfit-" + what + "-XXXXXX";
  return mkdtemp(tmpl.data());
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return;
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

}  // namespace memfit::test
