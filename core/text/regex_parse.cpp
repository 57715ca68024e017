// The pattern syntax: Oniguruma's (ONIG_SYNTAX_ONIGURUMA, the onig crate's default), the part of
// it tokenizer.json files use. Everything else is refused by name.
#include <fmt/format.h>

#include "memfit/error.h"
#include "regex.h"
#include "unicode.h"  // core/tokenizer: decode_utf8

namespace memfit::text::regex {
namespace {

constexpr std::uint32_t kMaxRepeat = 1000;  // {n,m} bounds (Oniguruma allows more; no tokenizer needs it)

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_ascii_letter(char32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

class Parser {
 public:
  explicit Parser(const std::string& pattern) : p_(pattern) {}

  Parsed run() {
    Parsed out;
    sets_ = &out.sets;
    out.root = alternation();
    if (i_ < p_.size()) fail("an unmatched ')'");
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("the regex '{}' is not supported by memfit's portable regex engine: {} at offset {}", p_, what, i_));
  }
  bool at_end() const { return i_ >= p_.size(); }
  char peek(std::size_t k = 0) const { return i_ + k < p_.size() ? p_[i_ + k] : '\0'; }
  bool eat(char c) {
    if (peek() != c || at_end()) return false;
    ++i_;
    return true;
  }
  char32_t next_code_point() {
    std::size_t n = 0;
    const char32_t c = tokenizer::decode_utf8(p_, i_, &n);
    i_ += n;
    return c;
  }

  Node set_node(CharSet set) {
    set.finish();
    Node n;
    n.kind = Node::Kind::kSet;
    n.set = static_cast<std::uint32_t>(sets_->size());
    sets_->push_back(std::move(set));
    return n;
  }

  Node alternation() {
    const bool saved_icase = icase_;  // (?i) lasts to the end of its group
    std::vector<Node> branches{concatenation()};
    while (eat('|')) branches.push_back(concatenation());
    icase_ = saved_icase;
    if (branches.size() == 1) return std::move(branches[0]);
    Node n;
    n.kind = Node::Kind::kAlt;
    n.kids = std::move(branches);
    return n;
  }

  Node concatenation() {
    Node n;
    n.kind = Node::Kind::kConcat;
    while (!at_end() && peek() != '|' && peek() != ')') {
      Node atom_node;
      if (!atom(atom_node)) continue;  // an inline option group (?i) adds no node
      n.kids.push_back(quantified(std::move(atom_node)));
    }
    return n;
  }

  // Parses an interval {n}, {n,}, {n,m}, {,m} at i_; false (i_ unchanged) when the text there is
  // not one, so the '{' is a literal (Oniguruma's ONIG_SYN_ALLOW_INVALID_INTERVAL).
  bool interval(std::uint32_t& min, std::uint32_t& max, bool& exact) {
    std::size_t k = i_ + 1;
    const auto number = [&](std::uint32_t& v) {
      const std::size_t start = k;
      v = 0;
      while (k < p_.size() && p_[k] >= '0' && p_[k] <= '9') {
        v = v * 10 + static_cast<std::uint32_t>(p_[k] - '0');
        if (v > kMaxRepeat) { i_ = start; fail(fmt::format("a repeat count above {}", kMaxRepeat)); }
        ++k;
      }
      return k > start;
    };
    const bool has_min = number(min);
    exact = false;
    if (k < p_.size() && p_[k] == ',') {
      ++k;
      if (!number(max)) max = kUnbounded;
      if (!has_min) {
        if (max == kUnbounded) return false;
        min = 0;
      }
    } else {
      if (!has_min) return false;
      max = min;
      exact = true;
    }
    if (k >= p_.size() || p_[k] != '}') return false;
    if (max < min) fail("a repeat {n,m} with m < n");
    i_ = k + 1;
    return true;
  }

  Node quantified(Node atom_node) {
    for (;;) {
      std::uint32_t min = 0, max = 0;
      bool exact = false, is_interval = false;
      const char c = peek();
      if (c == '*') { min = 0; max = kUnbounded; ++i_; }
      else if (c == '+') { min = 1; max = kUnbounded; ++i_; }
      else if (c == '?') { min = 0; max = 1; ++i_; }
      else if (c == '{' && interval(min, max, exact)) is_interval = true;
      else return atom_node;
      if (atom_node.kind == Node::Kind::kAnchor || atom_node.kind == Node::Kind::kLookahead)
        fail("a quantifier after an anchor or a lookahead");
      Node r;
      r.kind = Node::Kind::kRepeat;
      r.min = min;
      r.max = max;
      // Oniguruma's syntax: '?' after a repeat makes it lazy and '+' possessive, except after an
      // interval, where '+' is one more repeat and '?' after {n} makes it optional.
      if (!is_interval && eat('+')) r.greed = Greed::kPossessive;
      else if (!(is_interval && exact) && eat('?')) r.greed = Greed::kLazy;
      r.kids.push_back(std::move(atom_node));
      atom_node = std::move(r);
      if (!is_interval && (peek() == '*' || peek() == '+' || peek() == '?')) fail("a nested quantifier");
    }
  }

  // One atom into `out`; false for an inline option group, which leaves no atom.
  bool atom(Node& out) {
    const char c = peek();
    if (c == '(') return group(out);
    if (c == '*' || c == '+' || c == '?') fail("a quantifier with nothing to repeat");
    if (c == '[') {
      ++i_;
      out = set_node(char_class());
      return true;
    }
    if (c == '.') {
      ++i_;
      CharSet s;
      s.negated = true;
      s.add('\n');
      out = set_node(std::move(s));
      return true;
    }
    if (c == '^' || c == '$') {
      ++i_;
      out.kind = Node::Kind::kAnchor;
      out.anchor = c == '^' ? Anchor::kLineBegin : Anchor::kLineEnd;
      return true;
    }
    if (c == '\\') {
      ++i_;
      if (at_end()) fail("a '\\' at the end");
      const char e = peek();
      const Anchor anchors[] = {Anchor::kTextBegin, Anchor::kTextEnd, Anchor::kTextEndBeforeNewline};
      const char* const letters = "AzZ";
      for (int k = 0; k < 3; ++k)
        if (e == letters[k]) {
          ++i_;
          out.kind = Node::Kind::kAnchor;
          out.anchor = anchors[k];
          return true;
        }
      CharSet s;
      escape(s, false);
      out = set_node(std::move(s));
      return true;
    }
    CharSet s;
    literal(s, next_code_point());
    out = set_node(std::move(s));
    return true;
  }

  bool group(Node& out) {
    const std::size_t open = i_;
    ++i_;
    Node::Kind kind = Node::Kind::kConcat;  // a plain group: its contents
    bool negate = false;
    const bool saved_icase = icase_;
    if (eat('?')) {
      const char g = peek();
      if (g == ':') { ++i_; }
      else if (g == '=' || g == '!') { ++i_; kind = Node::Kind::kLookahead; negate = g == '!'; }
      else if (g == '>') { ++i_; kind = Node::Kind::kAtomic; }
      else if (g == '<' && (peek(1) == '=' || peek(1) == '!')) fail("a lookbehind (?<= or (?<!");
      else if (g == '<' || g == '\'') {  // a named group: only its contents matter here
        const char close = g == '<' ? '>' : '\'';
        while (!at_end() && peek() != close) ++i_;
        if (!eat(close)) fail("an unterminated group name");
      } else {
        // Options: (?i) / (?-i) to the end of the enclosing group, (?i:…) / (?-i:…) for one.
        bool on = true, icase = icase_;
        while (!at_end() && peek() != ')' && peek() != ':') {
          const char o = p_[i_];
          if (o == '-') on = false;
          else if (o == 'i') icase = on;
          else fail(fmt::format("the group option '{}' (only i is supported)", o));
          ++i_;
        }
        if (eat(')')) {
          icase_ = icase;
          return false;
        }
        if (!eat(':')) { i_ = open; fail("an unterminated group"); }
        icase_ = icase;
      }
    }
    Node inner = alternation();
    icase_ = saved_icase;
    if (!eat(')')) { i_ = open; fail("an unterminated group"); }
    if (kind == Node::Kind::kConcat) {
      out = std::move(inner);
      return true;
    }
    out.kind = kind;
    out.negate = negate;
    out.kids.push_back(std::move(inner));
    return true;
  }

  // A literal character into `s`, with its other ASCII case under (?i).
  void literal(CharSet& s, char32_t c) {
    s.add(c);
    if (!icase_) return;
    if (is_ascii_letter(c)) {
      s.add(c ^ 0x20);
      // Unicode simple case folding also maps these onto ASCII letters.
      if (c == 's' || c == 'S') s.add(0x17F);
      if (c == 'k' || c == 'K') s.add(0x212A);
    } else if (c >= 0x80) {
      const CharCategory k = general_category(c);
      if (k == CharCategory::kLu || k == CharCategory::kLl || k == CharCategory::kLt || simple_lowercase(c) != c)
        fail(fmt::format("case-insensitive matching of the non-ASCII letter U+{:04X}", static_cast<std::uint32_t>(c)));
    }
  }

  char32_t hex_value(std::size_t digits_min, std::size_t digits_max, char close) {
    std::uint32_t v = 0;
    std::size_t n = 0;
    while (n < digits_max && is_hex(peek())) {
      const char h = p_[i_++];
      v = v * 16 + static_cast<std::uint32_t>(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
      ++n;
      if (v > 0x10FFFF) fail("a code point above U+10FFFF");
    }
    if (n < digits_min) fail("a malformed hexadecimal escape");
    if (close && !eat(close)) fail("an unterminated \\x{…}");
    return v;
  }

  void property(CharSet& s, bool negated_escape) {
    if (!eat('{')) fail("\\p without {…}");
    bool negated = negated_escape;
    if (eat('^')) negated = !negated;
    const std::size_t start = i_;
    while (!at_end() && peek() != '}') ++i_;
    if (!eat('}')) fail("an unterminated \\p{");
    const std::string name = p_.substr(start, i_ - 1 - start);
    const std::string key = property_key(name);
    CharSet item;
    const bool known = property_set(key, item);
    if (!known) fail(fmt::format("the property \\p{{{}}}", name));
    if (icase_ && (item.categories & ((1u << static_cast<unsigned>(CharCategory::kLu)) | (1u << static_cast<unsigned>(CharCategory::kLl)) |
                                      (1u << static_cast<unsigned>(CharCategory::kLt)))) != 0 &&
        (item.categories & (1u << static_cast<unsigned>(CharCategory::kLo))) == 0)
      fail(fmt::format("a case-insensitive \\p{{{}}}", name));
    add_item(s, std::move(item), negated);
  }
  // `item` united into `s`: directly when plain, as a nested set when negated.
  static void add_item(CharSet& s, CharSet item, bool negated) {
    if (!negated) {
      s.white_space |= item.white_space;
      s.categories |= item.categories;
      s.ranges.insert(s.ranges.end(), item.ranges.begin(), item.ranges.end());
      s.lists.insert(s.lists.end(), item.lists.begin(), item.lists.end());
      for (CharSet& n : item.nested) s.nested.push_back(std::move(n));
      return;
    }
    item.negated = true;
    s.nested.push_back(std::move(item));
  }

  // The escape after '\' (i_ at its letter) into `s`; returns the code point when it is a single
  // character (for ranges in a class), or -1.
  long escape(CharSet& s, bool in_class) {
    const char e = p_[i_++];
    switch (e) {
      case 's': case 'S': { CharSet w; w.white_space = true; add_item(s, std::move(w), e == 'S'); return -1; }
      case 'd': case 'D': { CharSet d; d.add_category(CharCategory::kNd); add_item(s, std::move(d), e == 'D'); return -1; }
      case 'w': case 'W': {
        // Oniguruma's Unicode \w: Letter | Mark | Decimal_Number | Connector_Punctuation.
        CharSet w;
        for (const CharCategory k : {CharCategory::kLu, CharCategory::kLl, CharCategory::kLt, CharCategory::kLm, CharCategory::kLo,
                                     CharCategory::kMn, CharCategory::kMc, CharCategory::kMe, CharCategory::kNd, CharCategory::kPc})
          w.add_category(k);
        add_item(s, std::move(w), e == 'W');
        return -1;
      }
      case 'h': case 'H': {  // Oniguruma: a hexadecimal digit
        CharSet h;
        h.ranges = {{'0', '9'}, {'a', 'f'}, {'A', 'F'}};
        add_item(s, std::move(h), e == 'H');
        return -1;
      }
      case 'p': case 'P': property(s, e == 'P'); return -1;
      default: break;
    }
    char32_t c = 0;
    switch (e) {
      case 'n': c = '\n'; break;
      case 't': c = '\t'; break;
      case 'r': c = '\r'; break;
      case 'f': c = '\f'; break;
      case 'v': c = '\v'; break;
      case 'a': c = 0x07; break;
      case 'e': c = 0x1B; break;
      case 'b':
        if (!in_class) { --i_; fail("the word boundary \\b"); }
        c = 0x08;
        break;
      case 'x': c = eat('{') ? hex_value(1, 8, '}') : hex_value(1, 2, '\0'); break;
      case 'u': c = hex_value(4, 4, '\0'); break;
      case '0': c = 0; break;
      default:
        if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '1' && e <= '9')) {
          --i_;
          fail(fmt::format("the escape \\{}", e));
        }
        --i_;
        c = next_code_point();  // an escaped punctuation or other character stands for itself
    }
    literal(s, c);
    return static_cast<long>(c);
  }

  // A class after its '['; Oniguruma's: nested classes unite, '&&' (intersection) and POSIX
  // brackets are refused.
  CharSet char_class() {
    CharSet s;
    if (eat('^')) s.negated = true;
    bool first = true;
    for (;;) {
      if (at_end()) fail("an unterminated character class");
      const char c = peek();
      if (c == ']' && !first) { ++i_; break; }
      first = false;
      if (c == '[') {
        if (peek(1) == ':') fail("a POSIX bracket [:…:]");
        ++i_;
        CharSet inner = char_class();
        inner.finish();
        s.nested.push_back(std::move(inner));
        continue;
      }
      if (c == '&' && peek(1) == '&') fail("a class intersection &&");
      long lo = -1;
      CharSet item;
      if (c == '\\') {
        ++i_;
        if (at_end()) fail("a '\\' at the end");
        const bool saved = icase_;
        icase_ = false;  // case is applied to the whole item below
        lo = escape(item, true);
        icase_ = saved;
      } else {
        lo = static_cast<long>(next_code_point());
        item.add(static_cast<char32_t>(lo));
      }
      if (lo >= 0 && peek() == '-' && peek(1) != ']' && peek(1) != '\0') {
        ++i_;
        long hi = -1;
        if (peek() == '\\') {
          ++i_;
          CharSet ignored;
          const bool saved = icase_;
          icase_ = false;
          hi = escape(ignored, true);
          icase_ = saved;
          if (hi < 0) fail("a range ending in a class escape");
        } else if (peek() == '[') {
          fail("a range ending in a class");
        } else {
          hi = static_cast<long>(next_code_point());
        }
        if (hi < lo) fail("a range out of order");
        item.ranges = {{static_cast<char32_t>(lo), static_cast<char32_t>(hi)}};
      }
      if (icase_) fold_ranges(item);
      add_item(s, std::move(item), false);
    }
    return s;
  }

  // Under (?i): ASCII letters in the ranges gain their other case (and the two non-ASCII
  // characters folding onto ASCII); other cased characters are refused.
  void fold_ranges(CharSet& item) {
    const std::size_t n = item.ranges.size();
    for (std::size_t k = 0; k < n; ++k) {
      const auto [lo, hi] = item.ranges[k];
      if (hi >= 0x80) fail("a case-insensitive class with non-ASCII characters");
      for (char32_t c = lo; c <= hi; ++c)
        if (is_ascii_letter(c)) {
          item.add(c ^ 0x20);
          if (c == 's' || c == 'S') item.add(0x17F);
          if (c == 'k' || c == 'K') item.add(0x212A);
        }
    }
  }

  const std::string& p_;
  std::size_t i_ = 0;
  bool icase_ = false;
  std::vector<CharSet>* sets_ = nullptr;
};

}  // namespace

Parsed parse(const std::string& pattern) {
  if (tokenizer::invalid_utf8_at(pattern) != std::string_view::npos)
    throw Error(ErrorCode::kInvalidValue, fmt::format("the regex '{}' is not valid UTF-8", pattern));
  return Parser(pattern).run();
}

}  // namespace memfit::text::regex
