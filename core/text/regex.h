// core/text/regex.h — a small backtracking regex engine for the patterns tokenizer.json files
// use (GPT-2, cl100k/Llama 3, Qwen2, DeepSeek, tekken, BLOOM, … pre-tokenizer splits and
// normalizer replacements), with Oniguruma's meaning — the engine the `tokenizers` crate
// compiles them with: leftmost-first alternation, ^ and $ at line boundaries, \s = White_Space,
// \h = hex digit, nested classes as unions. Syntax it does not know is an error naming the
// construct (never a silent different meaning), and a match that backtracks without bound stops
// with an error instead of hanging the page.
//
// The parser (regex_parse.cpp) builds a Node tree; the compiler (regex_compile.cpp) lays it out
// as a Program for the matcher (regex_match.cpp), a backtracking VM with an explicit stack, so
// long texts do not recurse.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "char_set.h"

namespace memfit::text::regex {

enum class Anchor : std::uint8_t { kLineBegin, kLineEnd, kTextBegin, kTextEnd, kTextEndBeforeNewline };
enum class Greed : std::uint8_t { kGreedy, kLazy, kPossessive };

struct Node {
  enum class Kind : std::uint8_t { kEmpty, kSet, kConcat, kAlt, kRepeat, kLookahead, kAtomic, kAnchor };
  Kind kind = Kind::kEmpty;
  std::uint32_t set = 0;        // kSet: index into the parse's sets
  std::vector<Node> kids;       // kConcat, kAlt; one for kRepeat, kLookahead, kAtomic
  std::uint32_t min = 0, max = 0;  // kRepeat; max == kUnbounded for no limit
  Greed greed = Greed::kGreedy;
  bool negate = false;          // kLookahead: (?!…)
  Anchor anchor = Anchor::kLineBegin;
};
constexpr std::uint32_t kUnbounded = 0xFFFFFFFFu;

struct Parsed {
  Node root;
  std::vector<CharSet> sets;
};
// Throws memfit::Error (kInvalidValue) naming the pattern, the construct and its offset.
Parsed parse(const std::string& pattern);
// The set \p{…} names into `out`, by property key (unicode_data.h's property_key): general
// categories (short and long names), scripts, Alphabetic, White_Space, Any. False when unknown.
bool property_set(const std::string& key, CharSet& out);

enum class Op : std::uint8_t {
  kSet,        // one character of sets[x]
  kSetStar,    // greedily up to y characters of sets[x] (y == kUnbounded: any number), giving back one at a time
  kSplit,      // try x first, then y
  kJmp,        // go to x
  kAnchor,     // Anchor(x)
  kLookahead,  // the sub-program at pc + 1 (ending in kMatch) must (y == 0) or must not (y == 1) match here; then x
  kAtomic,     // the sub-program at pc + 1's first match, never revisited; then x
  kMark,       // register x = position (a loop iteration starts)
  kProgress,   // fail when register x == position (an iteration that consumed nothing)
  kMatch,
};
struct Inst {
  Op op;
  std::uint32_t x = 0, y = 0;
};
struct Program {
  std::string pattern;
  std::vector<Inst> code;
  std::vector<CharSet> sets;
  std::uint32_t registers = 0;
};
Program compile(const std::string& pattern);

// The leftmost match at or after byte `from` of valid UTF-8 `text`. Throws memfit::Error
// (kInvalidValue) when the match needs more steps than a bound proportional to the text.
bool search(const Program& program, std::string_view text, std::size_t from, std::size_t& begin, std::size_t& end);

}  // namespace memfit::text::regex
