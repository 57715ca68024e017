#include "timm_common.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace memfit::arch::timm {

namespace {

std::string_view base_name(std::string_view name) {
  if (auto colon = name.find(':'); colon != std::string_view::npos) name = name.substr(colon + 1);
  if (auto slash = name.rfind('/'); slash != std::string_view::npos) name = name.substr(slash + 1);
  return name;
}

}  // namespace

std::string arch_from_name(std::string_view model_name) {
  std::string_view base = base_name(model_name);
  if (auto dot = base.find('.'); dot != std::string_view::npos) base = base.substr(0, dot);
  return std::string(base);
}

std::string tag_from_name(std::string_view model_name) {
  std::string_view base = base_name(model_name);
  auto dot = base.find('.');
  return dot == std::string_view::npos ? std::string() : std::string(base.substr(dot + 1));
}

std::string architecture(const BuildRequest& r) {
  return r.config.string_or({"architecture"}, arch_from_name(r.model_name));
}

std::int64_t num_classes(const Config& c, std::int64_t fallback) {
  if (c.has("num_classes")) return c.count({"num_classes"});
  if (auto pc = c.sub("pretrained_cfg")) {
    const Json& j = pc->json();
    auto it = j.find("num_classes");
    if (it != j.end() && it->is_number_integer() && it->get<std::int64_t>() < 0) return fallback;
    if (pc->has("num_classes")) return pc->count({"num_classes"});
  }
  return fallback;
}

std::int64_t num_classes(const BuildRequest& r, std::int64_t fallback) {
  const std::string tag = tag_from_name(r.model_name);
  struct Dataset {
    std::string_view token;
    std::int64_t classes;
  };
  static constexpr Dataset kDatasets[] = {
      {"in1k", 1000}, {"in12k", 11821}, {"in21k", 21843}, {"in22k", 21841}};
  std::size_t best_pos = std::string::npos;
  std::int64_t classes = fallback;
  for (const auto& d : kDatasets) {
    // the token as a whole "_"-separated word of the tag, last occurrence
    for (std::size_t pos = tag.rfind(d.token); pos != std::string::npos;
         pos = pos == 0 ? std::string::npos : tag.rfind(d.token, pos - 1)) {
      const std::size_t end = pos + d.token.size();
      const bool word = (pos == 0 || tag[pos - 1] == '_') && (end == tag.size() || tag[end] == '_');
      if (!word) continue;
      if (best_pos == std::string::npos || pos > best_pos) {
        best_pos = pos;
        classes = d.classes;
      }
      break;
    }
  }
  if (best_pos != std::string::npos && tag.compare(best_pos, 5, "in21k") == 0 && best_pos >= 5) {
    if (tag.compare(best_pos - 5, 5, "miil_") == 0) classes = 11221;
    if (tag.compare(best_pos - 5, 5, "orig_") == 0) classes = 0;
  }
  return num_classes(r.config, classes);
}

std::optional<std::int64_t> input_size(const Config& c) {
  auto pc = c.sub("pretrained_cfg");
  if (!pc) return std::nullopt;
  auto size = pc->int_list({"input_size"});
  if (!size) return std::nullopt;
  if (size->size() != 3 || (*size)[1] < 1 || (*size)[1] != (*size)[2])
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: 'input_size' must be [channels, H, W] with H == W >= 1",
                            pc->where()));
  return (*size)[1];
}

std::int64_t py_round(double v) { return static_cast<std::int64_t>(std::nearbyint(v)); }

std::int64_t make_divisible(double v, std::int64_t divisor, std::int64_t min_value,
                            double round_limit) {
  const std::int64_t min_v = min_value ? min_value : divisor;
  const auto floored =
      static_cast<std::int64_t>(v + static_cast<double>(divisor) / 2) / divisor * divisor;
  std::int64_t new_v = std::max(min_v, floored);
  if (static_cast<double>(new_v) < round_limit * v) new_v += divisor;
  return new_v;
}

void conv2d(TreeBuilder& b, std::string_view name, std::int64_t in, std::int64_t out,
            std::int64_t kernel, std::int64_t stride, std::int64_t groups, bool bias,
            bool pad_same) {
  const bool static_pad = stride == 1 && (kernel - 1) % 2 == 0;
  nn::conv2d(b, name, in, out, kernel, kernel, bias, groups,
             pad_same && !static_pad ? "Conv2dSame" : "Conv2d");
}

void classifier(TreeBuilder& b, std::string_view name, std::int64_t in, std::int64_t classes) {
  if (classes > 0) nn::linear(b, name, in, classes);
  else identity(b, name);  // `nn.Linear(...) if num_classes > 0 else nn.Identity()`
}

void identity(TreeBuilder& b, std::string_view name) { b.stateless(name, "Identity"); }

void act(TreeBuilder& b, std::string_view name, std::string_view cls) {
  b.stateless(name, cls.empty() ? std::string_view("Identity") : cls);
}

void select_adaptive_pool(TreeBuilder& b, std::string_view name, bool flatten) {
  auto s = b.module(name, "SelectAdaptivePool2d");
  b.stateless("pool", "AdaptiveAvgPool2d");
  b.stateless("flatten", flatten ? "Flatten" : "Identity");
}

void unsupported(const BuildRequest& r, std::string_view family, const std::string& arch) {
  throw Error(ErrorCode::kUnknownModelType,
              fmt::format("{}: timm architecture '{}' is not described by the {} family",
                          r.config.where(), arch, family));
}

}  // namespace memfit::arch::timm
