#include "grapheme.h"

#include "unicode.h"  // core/tokenizer: decode_utf8
#include "unicode_data.h"

namespace memfit::text {
namespace {

enum class Gcb { kOther, kPrepend, kCr, kLf, kControl, kExtend, kZwj, kSpacingMark, kRegional, kL, kV, kT, kLv, kLvt, kPictographic };

Gcb gcb(char32_t c) {
  if (c == '\r') return Gcb::kCr;
  if (c == '\n') return Gcb::kLf;
  if (c == 0x200D) return Gcb::kZwj;
  if (c == 0x200C || (c >= 0x1F3FB && c <= 0x1F3FF)) return Gcb::kExtend;
  if (c >= 0x1F1E6 && c <= 0x1F1FF) return Gcb::kRegional;
  // Prepend: the prepended concatenation marks (Arabic number signs, Syriac abbreviation mark, …)
  // and the few preceding-repha letters; Thai and Lao SARA AM are SpacingMark though Lo.
  if ((c >= 0x0600 && c <= 0x0605) || c == 0x06DD || c == 0x070F || c == 0x0890 || c == 0x0891 ||
      c == 0x08E2 || c == 0x0D4E || c == 0x110BD || c == 0x110CD || c == 0x111C2 || c == 0x111C3 ||
      c == 0x1193F || c == 0x11941 || c == 0x11A3A || (c >= 0x11A84 && c <= 0x11A89) || c == 0x11D46)
    return Gcb::kPrepend;
  if (c == 0x0E33 || c == 0x0EB3) return Gcb::kSpacingMark;
  if ((c >= 0x1100 && c <= 0x115F) || (c >= 0xA960 && c <= 0xA97C)) return Gcb::kL;
  if ((c >= 0x1160 && c <= 0x11A7) || (c >= 0xD7B0 && c <= 0xD7C6)) return Gcb::kV;
  if ((c >= 0x11A8 && c <= 0x11FF) || (c >= 0xD7CB && c <= 0xD7FB)) return Gcb::kT;
  if (c >= 0xAC00 && c <= 0xD7A3) return (c - 0xAC00) % 28 == 0 ? Gcb::kLv : Gcb::kLvt;
  switch (general_category(c)) {
    case CharCategory::kMn:
    case CharCategory::kMe: return Gcb::kExtend;
    case CharCategory::kMc: return Gcb::kSpacingMark;
    case CharCategory::kCc:
    case CharCategory::kZl:
    case CharCategory::kZp:
    case CharCategory::kCf: return Gcb::kControl;
    case CharCategory::kSo: return Gcb::kPictographic;
    default: return Gcb::kOther;
  }
}

// Whether UAX #29 keeps `b` with the cluster ending in `a`; `zwj_after_pictographic`: the cluster
// so far is a pictograph followed by Extend* ZWJ (GB11); `regional_odd`: an odd number of
// regional indicators precede b (GB12/13).
bool joins(Gcb a, Gcb b, bool zwj_after_pictographic, bool regional_odd) {
  if (a == Gcb::kCr && b == Gcb::kLf) return true;                                  // GB3
  if (a == Gcb::kCr || a == Gcb::kLf || a == Gcb::kControl) return false;           // GB4
  if (b == Gcb::kCr || b == Gcb::kLf || b == Gcb::kControl) return false;           // GB5
  if (a == Gcb::kL && (b == Gcb::kL || b == Gcb::kV || b == Gcb::kLv || b == Gcb::kLvt)) return true;  // GB6
  if ((a == Gcb::kLv || a == Gcb::kV) && (b == Gcb::kV || b == Gcb::kT)) return true;                  // GB7
  if ((a == Gcb::kLvt || a == Gcb::kT) && b == Gcb::kT) return true;                                    // GB8
  if (b == Gcb::kExtend || b == Gcb::kZwj || b == Gcb::kSpacingMark) return true;   // GB9, GB9a
  if (a == Gcb::kPrepend) return true;                                              // GB9b
  if (a == Gcb::kZwj && b == Gcb::kPictographic && zwj_after_pictographic) return true;  // GB11
  if (a == Gcb::kRegional && b == Gcb::kRegional) return regional_odd;              // GB12, GB13
  return false;                                                                    // GB999
}

}  // namespace

std::size_t grapheme_end(std::string_view utf8, std::size_t from) {
  std::size_t at = from, n = 0;
  char32_t c = tokenizer::decode_utf8(utf8, at, &n);
  at += n;
  Gcb prev = gcb(c);
  bool pictographic_run = prev == Gcb::kPictographic;  // Pictographic Extend* so far
  bool zwj_after_pictographic = false;
  int regionals = prev == Gcb::kRegional ? 1 : 0;
  while (at < utf8.size()) {
    c = tokenizer::decode_utf8(utf8, at, &n);
    const Gcb next = gcb(c);
    if (!joins(prev, next, zwj_after_pictographic, regionals % 2 == 1)) break;
    zwj_after_pictographic = next == Gcb::kZwj && pictographic_run;
    pictographic_run = next == Gcb::kPictographic || (pictographic_run && next == Gcb::kExtend);
    regionals = next == Gcb::kRegional ? regionals + 1 : 0;
    prev = next;
    at += n;
  }
  return at;
}

}  // namespace memfit::text
