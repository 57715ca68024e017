#include "memfit/memory/linear_layers.h"

#include <cctype>
#include <string_view>

namespace memfit {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool has_numbered_component(const std::string& dotted) {
  std::size_t start = 0;
  while (start <= dotted.size()) {
    std::size_t end = dotted.find('.', start);
    if (end == std::string::npos) end = dotted.size();
    if (end > start) {
      bool digits = true;
      for (std::size_t i = start; i < end; ++i)
        digits = digits && std::isdigit(static_cast<unsigned char>(dotted[i]));
      if (digits) return true;
    }
    start = end + 1;
  }
  return false;
}

int weight_of(const TensorTree& tree, const ModuleNode& m) {
  for (int i : m.params) {
    const TensorInfo& t = tree.tensors[static_cast<std::size_t>(i)];
    if (ends_with(t.name, ".weight") || t.name == "weight") return i;
  }
  return -1;
}

}  // namespace

std::vector<LinearLayer> linear_layers(const TensorTree& tree, std::int64_t vocab) {
  bool any_linear_class = false;
  for (const auto& m : tree.modules)
    any_linear_class = any_linear_class || ends_with(m.class_name, "Linear") || m.class_name == "Conv1D";

  std::vector<LinearLayer> out;
  for (std::size_t mi = 0; mi < tree.modules.size(); ++mi) {
    const ModuleNode& m = tree.modules[mi];
    const int w = weight_of(tree, m);
    if (w < 0) continue;
    const TensorInfo& t = tree.tensors[static_cast<std::size_t>(w)];
    LinearLayer l;
    l.module = static_cast<int>(mi);
    l.weight = w;
    const std::string& cls = m.class_name;
    if (ends_with(cls, "Linear") && t.shape.size() == 2) {
      l.kind = LayerKind::kLinear;
      l.out = t.shape[0];
      l.in = t.shape[1];
    } else if (cls == "Conv1D" && t.shape.size() == 2) {
      l.kind = LayerKind::kConv1D;  // transformers' Conv1D stores [in, out]
      l.in = t.shape[0];
      l.out = t.shape[1];
    } else if (ends_with(cls, "Embedding") && t.shape.size() == 2) {
      l.kind = LayerKind::kEmbedding;
      l.in = t.shape[0];
      l.out = t.shape[1];
    } else if ((cls == "Conv1d" || cls == "Conv2d" || cls == "Conv3d") && t.shape.size() >= 3) {
      l.kind = LayerKind::kConv;
      l.out = t.shape[0];
      l.in = 1;
      for (std::size_t d = 1; d < t.shape.size(); ++d) l.in *= t.shape[d];
    } else if (!any_linear_class && t.shape.size() == 2 && t.kind == TensorKind::kParameter &&
               m.name.find("embed") == std::string::npos && m.name.find("wte") == std::string::npos &&
               m.name.find("wpe") == std::string::npos && m.name.find("norm") == std::string::npos) {
      l.kind = LayerKind::kLinear;  // checkpoint tree without classes
      l.out = t.shape[0];
      l.in = t.shape[1];
    } else {
      continue;
    }
    l.in_block = has_numbered_component(m.name);
    l.output_head = l.is_linear() && !l.in_block && vocab > 0 && l.out == vocab;
    out.push_back(l);
  }
  return out;
}

}  // namespace memfit
