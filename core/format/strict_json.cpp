#include "memfit/format/strict_json.h"

#include <limits>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace memfit {

std::optional<std::size_t> invalid_utf8_at(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) { ++i; continue; }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
    else return i;
    if (i + len > n) return i;
    for (std::size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    const bool overlong = (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
                          (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::nullopt;
}

std::size_t json_depth(std::string_view s, std::size_t limit) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escape = false;
  for (char c : s) {
    if (in_string) {
      if (escape) escape = false;
      else if (c == '\\') escape = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

namespace {

// Python's json.loads words for the IEEE values, and the numbers they are written as for
// nlohmann's parser (which refuses any number that is not finite). The markers underflow to
// zero: only a document that has both such a word and one of these exact spellings reads
// differently from Python.
constexpr std::string_view kWords[] = {"-Infinity", "Infinity", "NaN"};
constexpr std::string_view kMarkers[] = {"-1e-77777", "1e-77777", "2e-77777"};

// Copies `text` with each NaN / Infinity / -Infinity outside strings replaced by its marker;
// false (and nothing copied) when there is none.
bool rewrite_python_words(std::string_view text, std::string* out) {
  bool in_string = false, escape = false, any = false;
  std::size_t copied = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escape) escape = false;
      else if (c == '\\') escape = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (c != '-' && c != 'I' && c != 'N') continue;
    for (std::size_t w = 0; w < 3; ++w) {
      if (text.substr(i, kWords[w].size()) != kWords[w]) continue;
      if (!any) out->reserve(text.size() + 16);
      any = true;
      out->append(text.substr(copied, i - copied)).append(kMarkers[w]);
      i += kWords[w].size() - 1;
      copied = i + 1;
      break;
    }
  }
  if (any) out->append(text.substr(copied));
  return any;
}

double python_word_value(const std::string& raw, double parsed) {
  if (raw == kMarkers[0]) return -std::numeric_limits<double>::infinity();
  if (raw == kMarkers[1]) return std::numeric_limits<double>::infinity();
  if (raw == kMarkers[2]) return std::numeric_limits<double>::quiet_NaN();
  return parsed;
}

// A SAX handler that builds the ordered DOM itself. nlohmann's own builder inserts every key of
// an ordered_json object with a linear duplicate search (O(n²) for a 100k-key weight_map or a
// 1,000-tensor header); here members are appended and duplicates are found with a hash set per
// open object. Depth is checked as the parser descends, so `[[[[…` of any length stops early.
class StrictDomBuilder : public nlohmann::json_sax<Json> {
 public:
  StrictDomBuilder(Json* root, std::size_t max_depth, JsonDialect dialect, bool non_finite)
      : root_(root), max_depth_(max_depth), dialect_(dialect), non_finite_(non_finite) {}

  std::optional<StrictJsonError> error;

  bool null() override { return put(Json(nullptr)); }
  bool boolean(bool v) override { return put(Json(v)); }
  bool number_integer(number_integer_t v) override { return put(Json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return put(Json(v)); }
  bool number_float(number_float_t v, const string_t& raw) override {
    if (non_finite_) v = python_word_value(raw, v);
    return put(Json(v));
  }
  bool string(string_t& v) override { return put(Json(std::move(v))); }
  bool binary(binary_t& v) override { return put(Json::binary(std::move(v))); }

  bool start_object(std::size_t) override {
    if (!open(Json::object())) return false;
    keys_.emplace_back();
    return true;
  }
  bool key(string_t& k) override {
    replace_ = !keys_.back().insert(k).second;
    if (replace_ && dialect_ == JsonDialect::kStrict) {
      error = StrictJsonError{StrictJsonError::kDuplicateKey, fmt::format("duplicate key '{}'", k)};
      return false;
    }
    key_ = std::move(k);
    return true;
  }
  bool end_object() override {
    keys_.pop_back();
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return open(Json::array()); }
  bool end_array() override {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& e) override {
    std::string what = e.what();
    const auto colon = what.find(": ");
    error = StrictJsonError{StrictJsonError::kSyntax,
                            fmt::format("at byte {}: {}", position,
                                        colon == std::string::npos ? what : what.substr(colon + 2))};
    return false;
  }

 private:
  // Places a value in the current container (or as the root) and returns where it now lives.
  Json* place(Json&& v) {
    if (stack_.empty()) {
      *root_ = std::move(v);
      return root_;
    }
    Json& parent = *stack_.back();
    if (parent.is_array()) {
      auto& arr = parent.get_ref<Json::array_t&>();
      arr.push_back(std::move(v));
      return &arr.back();
    }
    auto& obj = parent.get_ref<Json::object_t&>();
    if (replace_) {  // kLastWins, like Python's json: the first position, the last value
      replace_ = false;
      for (auto& member : obj)
        if (member.first == key_) {
          member.second = std::move(v);
          return &member.second;
        }
    }
    // ordered_map is a vector of pairs: append without its linear duplicate search (done above).
    obj.Json::object_t::Container::emplace_back(std::move(key_), std::move(v));
    return &obj.back().second;
  }
  bool put(Json&& v) {
    place(std::move(v));
    return true;
  }
  bool open(Json&& container) {
    if (stack_.size() + 1 > max_depth_) {
      error = StrictJsonError{StrictJsonError::kTooDeep,
                              fmt::format("nested deeper than {} levels", max_depth_)};
      return false;
    }
    stack_.push_back(place(std::move(container)));
    return true;
  }

  Json* root_;
  std::size_t max_depth_;
  JsonDialect dialect_;
  bool non_finite_;  // the text had NaN / Infinity words, now written as marker numbers
  bool replace_ = false;  // the current key repeats one of its object's earlier keys
  std::vector<Json*> stack_;  // open containers; pointers stay valid: a container is only
                              // appended to while it is the innermost open one
  std::vector<std::set<std::string>> keys_;
  std::string key_;
};

}  // namespace

bool sax_parse_json(std::string_view text, nlohmann::json_sax<Json>* handler) {
  return Json::sax_parse(text.begin(), text.end(), handler);
}

std::optional<StrictJsonError> parse_strict_json(std::string_view text, std::size_t max_depth,
                                                 Json* out, JsonDialect dialect) {
  // nlohmann's lexer knows no NaN or Infinity: for kPython, those words (outside strings) become
  // marker numbers that the builder turns back into their values.
  std::string rewritten;
  const bool non_finite = dialect == JsonDialect::kPython && rewrite_python_words(text, &rewritten);
  StrictDomBuilder sax(out, max_depth, dialect, non_finite);
  const bool ok = sax_parse_json(non_finite ? std::string_view(rewritten) : text, &sax);
  if (sax.error) return sax.error;
  if (!ok) return StrictJsonError{StrictJsonError::kSyntax, "invalid JSON"};
  return std::nullopt;
}

}  // namespace memfit
