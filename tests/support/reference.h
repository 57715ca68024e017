// tests/support/reference.h — where the shared reference data lives, and loud skipping.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace memfit::test {

// $MEMFIT_REFERENCE_DIR, else <source>/../shared/reference; nullopt when it does not exist.
std::optional<std::string> reference_dir();
// Prints a loud "SKIPPED" line (to stderr and as a doctest MESSAGE) naming what was skipped.
void skip_loudly(const std::string& what);
std::string read_text(const std::string& path);
bool file_exists(const std::string& path);
std::vector<std::string> list_dir(const std::string& path);  // sorted entry names
// A file under tests/fixtures/.
std::string fixture_path(const std::string& relative);
std::string fixture(const std::string& relative);

}  // namespace memfit::test
