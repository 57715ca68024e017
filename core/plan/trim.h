#pragma once
// ASCII whitespace trimmed from both ends: how the planner's text inputs (--max-memory's
// "0: 24GiB", --nodes' hosts and devices) are read. One copy for device.cpp and nodes.cpp.
#include <cctype>
#include <string>
#include <string_view>

namespace memfit::plan {

inline std::string trim(std::string_view s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return std::string(s.substr(a, b - a));
}

}  // namespace memfit::plan
