#include "composite.h"

#include <algorithm>

#include <fmt/format.h>

namespace memfit::arch {
namespace {

// The towers AutoModel builds for a vision_config's model_type (transformers' auto mapping):
// the family that holds the class, and whether that family reads the tower from a
// `vision_config` of its own (CLIP and SigLIP's classes do) or from the config itself (Pixtral).
struct Tower {
  std::string_view model_type, family, class_name;
  bool nested;
};
constexpr Tower kTowers[] = {
    {"clip_vision_model", "clip", "CLIPVisionModel", true},
    {"siglip_vision_model", "siglip", "SiglipVisionModel", true},
    {"siglip2_vision_model", "siglip2", "Siglip2VisionModel", true},
    {"pixtral", "pixtral", "PixtralVisionModel", false},
};

const Family& family_of(std::string_view type, const Config& c) {
  const Family* f = find_family("transformers", type);
  if (!f)
    throw Error(ErrorCode::kUnknownModelType,
                fmt::format("{}: model_type '{}' is not supported; supported: {}", c.where(), type,
                            supported_keys("transformers")));
  return *f;
}

}  // namespace

void graft(TreeBuilder& b, std::string_view name, const TensorTree& sub,
           std::vector<std::string>& no_split) {
  const std::string prefix = b.path(name) + ".";
  // Depth-first over the modules in registration order, each one's own tensors first.
  auto visit = [&](auto&& self, int m, std::string_view leaf) -> void {
    const ModuleNode& node = sub.modules[static_cast<std::size_t>(m)];
    if (node.params.empty() && node.buffers.empty() && node.children.empty()) {
      b.stateless(leaf, node.class_name, node.era);
      return;
    }
    auto scope = node.repeat > 1 ? b.repeated(leaf, node.class_name, node.repeat)
                                 : b.module(leaf, node.class_name);
    const std::size_t strip = node.name.empty() ? 0 : node.name.size() + 1;
    for (int t : node.params) {
      const TensorInfo& x = sub.tensors[static_cast<std::size_t>(t)];
      const std::string_view own = std::string_view(x.name).substr(strip);
      if (x.is_alias()) b.tied_param(own, prefix + sub.tensors[static_cast<std::size_t>(x.tied_to)].name);
      else b.param(own, x.shape, x.dtype);
    }
    for (int t : node.buffers) {
      const TensorInfo& x = sub.tensors[static_cast<std::size_t>(t)];
      b.buffer(std::string_view(x.name).substr(strip), x.shape, x.dtype, x.persistent, x.era);
    }
    for (int child : node.children) {
      const std::string& full = sub.modules[static_cast<std::size_t>(child)].name;
      self(self, child, std::string_view(full).substr(strip));
    }
  };
  visit(visit, 0, name);
  for (const auto& cls : sub.no_split_classes)
    if (std::find(no_split.begin(), no_split.end(), cls) == no_split.end()) no_split.push_back(cls);
}

Config part_config(const Config& c, std::string_view key, std::string_view fallback) {
  if (auto sub = c.sub(key)) return *sub;
  return Config(Config::parse(fallback, c.where()), fmt::format("{}: {} (default)", c.where(), key));
}

TensorTree language_model(const Config& text, std::string_view default_type,
                          std::string_view auto_class, std::string_view model_name,
                          std::optional<ModelDims>* dims) {
  const std::string type = text.string_or({"model_type"}, std::string(default_type));
  const Family& f = family_of(type, text);
  for (const ModelClass& cls : f.classes)
    if (cls.auto_class == auto_class) return f.build(BuildRequest{text, cls.name, model_name, dims});
  throw Error(ErrorCode::kUnknownClass,
              fmt::format("{}: model_type '{}' has no {} class in memfit", text.where(), type,
                          auto_class));
}

TensorTree vision_model(const Config& vision, std::string_view default_type,
                        std::string_view model_name) {
  const std::string type = vision.string_or({"model_type"}, std::string(default_type));
  for (const Tower& t : kTowers) {
    if (t.model_type != type) continue;
    const Family& f = family_of(t.family, vision);
    if (!t.nested) return f.build(BuildRequest{vision, t.class_name, model_name});
    // The tower family's composite reader: its vision part, from a `vision_config`.
    const Config wrapped(Json{{"vision_config", vision.json()}}, vision.where());
    return f.build(BuildRequest{wrapped, t.class_name, model_name});
  }
  std::string known;
  for (const Tower& t : kTowers) known += (known.empty() ? "" : ", ") + std::string(t.model_type);
  throw Error(ErrorCode::kUnknownModelType,
              fmt::format("{}: vision tower model_type '{}' is not supported; supported: {}",
                          vision.where(), type, known));
}

std::int64_t part_hidden(const Config& part, std::int64_t fallback) {
  return part.dim_or({"hidden_size"}, fallback);
}

std::int64_t vision_feature_layers(const Config& c) {
  const auto it = c.json().find("vision_feature_layer");
  if (it != c.json().end() && it->is_array())
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(it->size()));
  return 1;
}

TensorTree build_vlm(const BuildRequest& r, const VlmParts& parts, const PartFn& between) {
  const bool base = r.class_name == parts.base_class;
  const TensorTree text = language_model(*parts.text, parts.text_default_type,
                                         base ? "AutoModel" : "AutoModelForCausalLM", r.model_name,
                                         r.dims);
  TreeBuilder b{std::string(r.class_name)};
  std::vector<std::string> no_split;
  graft(b, parts.vision_name, *parts.vision, no_split);
  between(b);
  graft(b, "language_model", text, no_split);
  // transformers lists the language model's blocks first.
  std::stable_partition(no_split.begin(), no_split.end(), [&](const std::string& cls) {
    return std::find(text.no_split_classes.begin(), text.no_split_classes.end(), cls) !=
           text.no_split_classes.end();
  });
  b.set_no_split(std::move(no_split));
  return b.finish();
}

}  // namespace memfit::arch
