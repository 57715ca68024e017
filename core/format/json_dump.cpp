#include "memfit/format/json_dump.h"

#include <cstdint>

namespace memfit {
namespace {

void write_string(const std::string& s, std::string& out) {
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\') {
      out += Json(s).dump();  // escapes, and non-ASCII bytes checked as UTF-8, as dump() does
      return;
    }
  }
  out += '"';
  out += s;
  out += '"';
}

// Digits by hand: smaller in the module than a std::to_chars instance, and no allocation per
// number as with std::to_string.
void write_integer(std::uint64_t magnitude, bool negative, std::string& out) {
  char buf[21];
  char* p = buf + sizeof buf;
  do {
    *--p = static_cast<char>('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude != 0);
  if (negative) *--p = '-';
  out.append(p, buf + sizeof buf);
}

void write(const Json& j, std::string& out) {
  switch (j.type()) {
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [k, v] : j.items()) {
        if (!first) out += ',';
        first = false;
        write_string(k, out);
        out += ':';
        write(v, out);
      }
      out += '}';
      return;
    }
    case Json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& v : j) {
        if (!first) out += ',';
        first = false;
        write(v, out);
      }
      out += ']';
      return;
    }
    case Json::value_t::string: write_string(j.get_ref<const std::string&>(), out); return;
    case Json::value_t::number_integer: {
      const auto v = j.get<std::int64_t>();
      write_integer(v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v), v < 0, out);
      return;
    }
    case Json::value_t::number_unsigned: write_integer(j.get<std::uint64_t>(), false, out); return;
    case Json::value_t::boolean: out += j.get<bool>() ? "true" : "false"; return;
    case Json::value_t::null: out += "null"; return;
    default: out += j.dump(); return;  // floats (nlohmann's shortest form), binary, discarded
  }
}

}  // namespace

std::string dump_json(const Json& value) {
  std::string out;
  write(value, out);
  return out;
}

}  // namespace memfit
