// What \p{name} stands for: Oniguruma's property names, compared loosely (UAX44-LM3).
#include "regex.h"

namespace memfit::text::regex {
namespace {

// General-category names (short and long, Oniguruma compares them ignoring case, spaces, '_'
// and '-') and the categories each stands for, as first..last in CharCategory's order.
struct CategoryName {
  const char* short_name;
  const char* long_name;
  CharCategory first, last;
};
constexpr CategoryName kCategoryNames[] = {
    {"l", "letter", CharCategory::kLu, CharCategory::kLo},
    {"lu", "uppercaseletter", CharCategory::kLu, CharCategory::kLu},
    {"ll", "lowercaseletter", CharCategory::kLl, CharCategory::kLl},
    {"lt", "titlecaseletter", CharCategory::kLt, CharCategory::kLt},
    {"lm", "modifierletter", CharCategory::kLm, CharCategory::kLm},
    {"lo", "otherletter", CharCategory::kLo, CharCategory::kLo},
    {"lc", "casedletter", CharCategory::kLu, CharCategory::kLt},
    {"m", "mark", CharCategory::kMn, CharCategory::kMe},
    {"mn", "nonspacingmark", CharCategory::kMn, CharCategory::kMn},
    {"mc", "spacingmark", CharCategory::kMc, CharCategory::kMc},
    {"me", "enclosingmark", CharCategory::kMe, CharCategory::kMe},
    {"n", "number", CharCategory::kNd, CharCategory::kNo},
    {"nd", "decimalnumber", CharCategory::kNd, CharCategory::kNd},
    {"nl", "letternumber", CharCategory::kNl, CharCategory::kNl},
    {"no", "othernumber", CharCategory::kNo, CharCategory::kNo},
    {"p", "punctuation", CharCategory::kPc, CharCategory::kPo},
    {"pc", "connectorpunctuation", CharCategory::kPc, CharCategory::kPc},
    {"pd", "dashpunctuation", CharCategory::kPd, CharCategory::kPd},
    {"ps", "openpunctuation", CharCategory::kPs, CharCategory::kPs},
    {"pe", "closepunctuation", CharCategory::kPe, CharCategory::kPe},
    {"pi", "initialpunctuation", CharCategory::kPi, CharCategory::kPi},
    {"pf", "finalpunctuation", CharCategory::kPf, CharCategory::kPf},
    {"po", "otherpunctuation", CharCategory::kPo, CharCategory::kPo},
    {"s", "symbol", CharCategory::kSm, CharCategory::kSo},
    {"sm", "mathsymbol", CharCategory::kSm, CharCategory::kSm},
    {"sc", "currencysymbol", CharCategory::kSc, CharCategory::kSc},
    {"sk", "modifiersymbol", CharCategory::kSk, CharCategory::kSk},
    {"so", "othersymbol", CharCategory::kSo, CharCategory::kSo},
    {"z", "separator", CharCategory::kZs, CharCategory::kZp},
    {"zs", "spaceseparator", CharCategory::kZs, CharCategory::kZs},
    {"zl", "lineseparator", CharCategory::kZl, CharCategory::kZl},
    {"zp", "paragraphseparator", CharCategory::kZp, CharCategory::kZp},
    {"cc", "control", CharCategory::kCc, CharCategory::kCc},
    {"cf", "format", CharCategory::kCf, CharCategory::kCf},
    {"cs", "surrogate", CharCategory::kCs, CharCategory::kCs},
    {"co", "privateuse", CharCategory::kCo, CharCategory::kCo},
    {"cn", "unassigned", CharCategory::kCn, CharCategory::kCn},
};

}  // namespace

bool property_set(const std::string& key, CharSet& out) {
  bool known = false;
  for (const CategoryName& c : kCategoryNames)
    if (key == c.short_name || key == c.long_name) {
      for (unsigned k = static_cast<unsigned>(c.first); k <= static_cast<unsigned>(c.last); ++k) out.categories |= 1u << k;
      known = true;
    }
  if (known) return true;
  if (key == "c" || key == "other") {  // C = Cc Cf Cs Co Cn
    for (const CharCategory k : {CharCategory::kCc, CharCategory::kCf, CharCategory::kCs, CharCategory::kCo, CharCategory::kCn})
      out.add_category(k);
  } else if (key == "any") {
    out.ranges.push_back({0, 0x10FFFF});
  } else if (key == "alphabetic" || key == "alpha") {
    out.lists.push_back(alphabetic());
  } else if (key == "whitespace" || key == "space") {
    out.white_space = true;
  } else {
    const InversionList list = script(key, &known);
    if (!known) return false;
    out.lists.push_back(list);
  }
  return true;
}

}  // namespace memfit::text::regex
