// The matcher: a backtracking VM (re1's "backtrack" design, leftmost-first like Oniguruma) over
// an explicit stack, with a step budget so that a pattern that backtracks exponentially fails
// with an error instead of hanging.
#include <fmt/format.h>

#include "memfit/error.h"
#include "regex.h"
#include "unicode.h"  // core/tokenizer: decode_utf8

namespace memfit::text::regex {
namespace {

// What a failed path resumes: another branch, one character given back by a kSetStar, or a
// register's previous value restored.
struct Frame {
  enum class Kind : std::uint8_t { kRetry, kGiveBack, kRestore } kind;
  std::uint32_t pc;
  std::size_t pos;
  std::size_t aux;  // kGiveBack: the lowest position; kRestore: the register
};

class Matcher {
 public:
  Matcher(const Program& p, std::string_view text, std::size_t budget) : p_(p), text_(text), budget_(budget) {
    registers_.assign(p.registers, std::string_view::npos);
  }

  // Runs the code from pc at pos; the end of the first match in priority order, or false.
  bool run(std::uint32_t pc, std::size_t pos, std::size_t& end) {
    const std::size_t base = stack_.size();
    for (;;) {
      spend(pos);
      bool ok = true;
      const Inst& in = p_.code[pc];
      switch (in.op) {
        case Op::kSet: {
          std::size_t n = 0;
          ok = pos < text_.size() && p_.sets[in.x].contains(tokenizer::decode_utf8(text_, pos, &n));
          if (ok) {
            pos += n;
            ++pc;
          }
          break;
        }
        case Op::kSetStar: {
          const std::size_t start = pos;
          const CharSet& set = p_.sets[in.x];
          for (std::uint32_t count = 0; count < in.y && pos < text_.size(); ++count) {
            std::size_t n = 0;
            if (!set.contains(tokenizer::decode_utf8(text_, pos, &n))) break;
            pos += n;
            spend(pos);
          }
          if (pos > start) stack_.push_back({Frame::Kind::kGiveBack, pc + 1, pos, start});
          ++pc;
          break;
        }
        case Op::kSplit:
          stack_.push_back({Frame::Kind::kRetry, in.y, pos, 0});
          pc = in.x;
          break;
        case Op::kJmp: pc = in.x; break;
        case Op::kAnchor:
          ok = anchor_holds(static_cast<Anchor>(in.x), pos);
          ++pc;
          break;
        case Op::kLookahead: {
          std::size_t ignored = 0;
          ok = run(pc + 1, pos, ignored) == (in.y == 0);
          pc = in.x;
          break;
        }
        case Op::kAtomic:
          ok = run(pc + 1, pos, pos);
          pc = in.x;
          break;
        case Op::kMark:
          stack_.push_back({Frame::Kind::kRestore, 0, registers_[in.x], in.x});
          registers_[in.x] = pos;
          ++pc;
          break;
        case Op::kProgress:
          ok = registers_[in.x] != pos;
          ++pc;
          break;
        case Op::kMatch:
          end = pos;
          stack_.resize(base);
          return true;
      }
      if (ok) continue;
      if (!backtrack(base, pc, pos)) return false;
    }
  }

 private:
  void spend(std::size_t pos) {
    if (budget_ == 0)
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("the regex '{}' backtracks too much at byte {} of a {}-byte text (memfit's portable "
                              "regex engine stops after a bounded number of steps)",
                              p_.pattern, pos, text_.size()));
    --budget_;
  }

  bool anchor_holds(Anchor a, std::size_t pos) const {
    const std::size_t n = text_.size();
    switch (a) {
      case Anchor::kLineBegin: return pos == 0 || text_[pos - 1] == '\n';
      case Anchor::kLineEnd: return pos == n || text_[pos] == '\n';
      case Anchor::kTextBegin: return pos == 0;
      case Anchor::kTextEnd: return pos == n;
      case Anchor::kTextEndBeforeNewline: return pos == n || (pos + 1 == n && text_[pos] == '\n');
    }
    return false;
  }

  // Pops frames above `base` until one resumes a path (pc, pos set); false when none is left.
  bool backtrack(std::size_t base, std::uint32_t& pc, std::size_t& pos) {
    while (stack_.size() > base) {
      const Frame f = stack_.back();
      stack_.pop_back();
      switch (f.kind) {
        case Frame::Kind::kRetry:
          pc = f.pc;
          pos = f.pos;
          return true;
        case Frame::Kind::kGiveBack: {
          std::size_t p = f.pos - 1;
          while (p > f.aux && (static_cast<unsigned char>(text_[p]) & 0xC0) == 0x80) --p;
          if (p > f.aux) stack_.push_back({Frame::Kind::kGiveBack, f.pc, p, f.aux});
          pc = f.pc;
          pos = p;
          return true;
        }
        case Frame::Kind::kRestore: registers_[f.aux] = f.pos; break;
      }
    }
    return false;
  }

  const Program& p_;
  std::string_view text_;
  std::size_t budget_;
  std::vector<Frame> stack_;
  std::vector<std::size_t> registers_;
};

}  // namespace

bool search(const Program& program, std::string_view text, std::size_t from, std::size_t& begin, std::size_t& end) {
  // Steps allowed: generous for any linear-time use of these patterns (a few dozen per byte),
  // small enough that an exponential one stops within a fraction of a second.
  const std::size_t budget = (std::size_t{1} << 20) + 1024 * (text.size() - from);
  Matcher m(program, text, budget);
  for (std::size_t start = from;;) {
    if (m.run(0, start, end)) {
      begin = start;
      return true;
    }
    if (start >= text.size()) return false;
    std::size_t n = 0;
    tokenizer::decode_utf8(text, start, &n);
    start += n;
  }
}

}  // namespace memfit::text::regex
