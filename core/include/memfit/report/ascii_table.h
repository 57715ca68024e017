// memfit/report/ascii_table.h — accelerate's create_ascii_table(), character for character.
#pragma once

#include <string>
#include <vector>

namespace memfit {

// Reproduces accelerate's box table including its width quirks (the last column absorbs the
// title overflow twice; abs() of a negative difference). Widths count code points like Python.
std::string create_ascii_table(const std::vector<std::string>& headers,
                               const std::vector<std::vector<std::string>>& rows,
                               const std::string& title);

// Python's str.center(width) (the odd padding goes where CPython puts it).
std::string python_center(const std::string& s, std::size_t width);
std::size_t utf8_length(const std::string& s);

}  // namespace memfit
