// Lookups over the table of architecture families (families(): family_list.cpp).
#include <algorithm>
#include <set>
#include <string>

#include "memfit/model/arch.h"

namespace memfit {

std::vector<std::string_view> family_keys(const Family& f) {
  std::vector<std::string_view> out(f.keys);
  if (f.variant_keys)
    for (std::string_view k : f.variant_keys()) out.push_back(k);
  return out;
}

namespace {

// Without building a list per family: only timm families, when asked, name their variants.
bool has_key(const Family& f, std::string_view key) {
  if (std::find(f.keys.begin(), f.keys.end(), key) != f.keys.end()) return true;
  if (!f.variant_keys) return false;
  const auto variants = f.variant_keys();
  return std::find(variants.begin(), variants.end(), key) != variants.end();
}

}  // namespace

const Family* find_family(std::string_view library, std::string_view key) {
  for (const Family* f : families())
    if (f->library == library && has_key(*f, key)) return f;
  return nullptr;
}

std::string supported_keys(std::string_view library) {
  std::set<std::string> keys;
  for (const Family* f : families())
    if (f->library == library)
      for (auto k : family_keys(*f)) keys.insert(std::string(k));
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : ", ") + k;
  return out;
}

const ModelClass* find_class(const Family& f, std::string_view class_name) {
  for (const auto& c : f.classes)
    if (c.name == class_name) return &c;
  return nullptr;
}

}  // namespace memfit
