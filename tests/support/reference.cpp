#include "support/reference.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace memfit::test {
namespace fs = std::filesystem;

std::optional<std::string> reference_dir() {
  std::string dir;
  if (const char* env = std::getenv("MEMFIT_REFERENCE_DIR")) dir = env;
  else dir = std::string(MEMFIT_SOURCE_DIR) + "/../shared/reference";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::nullopt;
  return fs::weakly_canonical(dir, ec).string();
}

void skip_loudly(const std::string& what) {
  std::fprintf(stderr, "\n*** SKIPPED: %s (reference data not found; set MEMFIT_REFERENCE_DIR) ***\n",
               what.c_str());
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool file_exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

std::vector<std::string> list_dir(const std::string& path) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(path, ec)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string fixture_path(const std::string& relative) {
  return std::string(MEMFIT_SOURCE_DIR) + "/tests/fixtures/" + relative;
}

std::string fixture(const std::string& relative) { return read_text(fixture_path(relative)); }

}  // namespace memfit::test
