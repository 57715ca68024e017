// The Node tree laid out as a Program (regex.h): alternation as a chain of splits, repeats as
// copies plus a loop, a repeated single class as one kSetStar (no backtracking entry per
// character), possessive repeats as atomic groups.
#include <fmt/format.h>

#include "memfit/error.h"
#include "regex.h"

namespace memfit::text::regex {
namespace {

constexpr std::size_t kMaxProgram = 1u << 16;  // instructions: {n,m} copies its operand

bool nullable(const Node& n) {
  switch (n.kind) {
    case Node::Kind::kEmpty:
    case Node::Kind::kAnchor:
    case Node::Kind::kLookahead: return true;
    case Node::Kind::kSet: return false;
    case Node::Kind::kConcat:
      for (const Node& k : n.kids)
        if (!nullable(k)) return false;
      return true;
    case Node::Kind::kAlt:
      for (const Node& k : n.kids)
        if (nullable(k)) return true;
      return false;
    case Node::Kind::kRepeat: return n.min == 0 || nullable(n.kids[0]);
    case Node::Kind::kAtomic: return nullable(n.kids[0]);
  }
  return true;
}

class Compiler {
 public:
  explicit Compiler(Program& p) : p_(p) {}

  void node(const Node& n) {
    switch (n.kind) {
      case Node::Kind::kEmpty: break;
      case Node::Kind::kSet: emit(Op::kSet, n.set); break;
      case Node::Kind::kConcat:
        for (const Node& k : n.kids) node(k);
        break;
      case Node::Kind::kAlt: alternation(n); break;
      case Node::Kind::kAnchor: emit(Op::kAnchor, static_cast<std::uint32_t>(n.anchor)); break;
      case Node::Kind::kLookahead: sub_program(Op::kLookahead, n.kids[0], n.negate ? 1 : 0); break;
      case Node::Kind::kAtomic: sub_program(Op::kAtomic, n.kids[0], 0); break;
      case Node::Kind::kRepeat:
        if (n.greed == Greed::kPossessive) {
          Node greedy = n;
          greedy.greed = Greed::kGreedy;
          sub_program(Op::kAtomic, greedy, 0);
        } else {
          repeat(n);
        }
        break;
    }
  }

 private:
  std::uint32_t pc() const { return static_cast<std::uint32_t>(p_.code.size()); }
  std::uint32_t emit(Op op, std::uint32_t x = 0, std::uint32_t y = 0) {
    if (p_.code.size() >= kMaxProgram)
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("the regex '{}' is too large for memfit's portable regex engine (over {} instructions)", p_.pattern, kMaxProgram));
    p_.code.push_back({op, x, y});
    return pc() - 1;
  }

  void alternation(const Node& n) {
    std::vector<std::uint32_t> jumps;
    for (std::size_t k = 0; k + 1 < n.kids.size(); ++k) {
      const std::uint32_t split = emit(Op::kSplit, pc() + 1);
      node(n.kids[k]);
      jumps.push_back(emit(Op::kJmp));
      p_.code[split].y = pc();
    }
    node(n.kids.back());
    for (const std::uint32_t j : jumps) p_.code[j].x = pc();
  }

  void sub_program(Op op, const Node& body, std::uint32_t y) {
    const std::uint32_t at = emit(op, 0, y);
    node(body);
    emit(Op::kMatch);
    p_.code[at].x = pc();
  }

  void repeat(const Node& n) {
    const Node& body = n.kids[0];
    for (std::uint32_t k = 0; k < n.min; ++k) node(body);
    if (n.max == n.min) return;
    if (body.kind == Node::Kind::kSet && n.greed == Greed::kGreedy) {
      emit(Op::kSetStar, body.set, n.max == kUnbounded ? kUnbounded : n.max - n.min);
      return;
    }
    const bool lazy = n.greed == Greed::kLazy;
    if (n.max != kUnbounded) {
      // x{0,k}: k optional copies; skipping one skips the rest.
      std::vector<std::uint32_t> splits;
      for (std::uint32_t k = n.min; k < n.max; ++k) {
        splits.push_back(emit(Op::kSplit));
        const std::uint32_t body_pc = pc();
        node(body);
        p_.code[splits.back()].x = body_pc;  // patched below for lazy
      }
      for (const std::uint32_t s : splits) {
        const std::uint32_t into = p_.code[s].x;
        p_.code[s] = lazy ? Inst{Op::kSplit, pc(), into} : Inst{Op::kSplit, into, pc()};
      }
      return;
    }
    // x*: a loop; when x can match empty, an iteration that consumed nothing ends it.
    const std::uint32_t loop = emit(Op::kSplit);
    const std::uint32_t body_pc = pc();
    const bool guard = nullable(body);
    const std::uint32_t reg = guard ? p_.registers++ : 0;
    if (guard) emit(Op::kMark, reg);
    node(body);
    if (guard) emit(Op::kProgress, reg);
    emit(Op::kJmp, loop);
    p_.code[loop] = lazy ? Inst{Op::kSplit, pc(), body_pc} : Inst{Op::kSplit, body_pc, pc()};
  }

  Program& p_;
};

}  // namespace

Program compile(const std::string& pattern) {
  Parsed parsed = parse(pattern);
  Program p;
  p.pattern = pattern;
  p.sets = std::move(parsed.sets);
  Compiler(p).node(parsed.root);
  p.code.push_back({Op::kMatch});
  return p;
}

}  // namespace memfit::text::regex
