// core/chat/text.h — the Python str operations chat templates call, on UTF-8 text: indexing and
// len() count code points, strip() knows Python's whitespace, upper()/lower()/title() change
// ASCII letters only (templates apply them to role names and keywords).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memfit::chat::text {

std::vector<std::string_view> code_points(std::string_view s);  // one view per UTF-8 sequence
std::size_t length(std::string_view s);
bool is_python_space(std::string_view code_point);

enum class Side { kBoth, kLeft, kRight };
// str.strip()/lstrip()/rstrip(): Python's whitespace, or (chars given) any code point of chars.
std::string strip(std::string_view s, Side side, const std::string* chars = nullptr);
// str.split(): with no separator, runs of whitespace; maxsplit < 0: no limit.
std::vector<std::string> split(std::string_view s, const std::string* sep, long maxsplit);
std::string replace(std::string_view s, std::string_view old_text, std::string_view new_text,
                    long count);
std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string capitalize(std::string_view s);
std::string python_title(std::string_view s);  // str.title()
std::string jinja_title(std::string_view s);   // Jinja's |title filter (words split at -, space, ([{<)
std::vector<std::string> splitlines(std::string_view s);

}  // namespace memfit::chat::text
