#include "memfit/model/checkpoint_tree.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <fmt/format.h>

#include "memfit/model/tree_builder.h"

namespace memfit {
namespace {

std::vector<std::string> split(const std::string& name) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', start)) {
    parts.push_back(name.substr(start, dot - start));
    start = dot + 1;
  }
  parts.push_back(name.substr(start));
  return parts;
}

bool is_number(const std::string& s) {
  return !s.empty() && s.size() < 10 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// Natural order of one name component: numbers by value, before words.
bool component_less(const std::string& a, const std::string& b) {
  const bool na = is_number(a), nb = is_number(b);
  if (na && nb) return std::stoul(a) < std::stoul(b);
  if (na != nb) return na;
  return a < b;
}

struct Node {
  std::map<std::string, Node, bool (*)(const std::string&, const std::string&)> children{
      &component_less};
  std::vector<const CheckpointTensor*> tensors;
};

// Children of a container whose keys are all numbers (a ModuleList) become no-split blocks.
void emit(TreeBuilder& b, const Node& node) {
  for (const CheckpointTensor* t : node.tensors) b.param(split(t->name).back(), t->shape, t->dtype);
  const bool container = !node.children.empty() &&
                         std::all_of(node.children.begin(), node.children.end(),
                                     [](const auto& kv) { return is_number(kv.first); });
  for (const auto& [name, child] : node.children) {
    auto s = b.module(name, container ? kRepeatedBlockClass : "Module");
    emit(b, child);
  }
}

const char* kBasePrefixes[] = {"model", "transformer", "bert", "roberta", "base_model", "encoder",
                               "gpt_neox", "vit", "distilbert", "albert", "decoder"};

// The prefixes to try: the usual base_model_prefix values first (in this order, which settles a
// tie), then the first segment of every other name on either side — a head class's base is one of
// its top-level modules ("mpnet", "deberta", …), so a family's own prefix needs no entry above.
// The best overlap wins, so a wrong candidate costs only its count.
std::vector<std::string> prefix_candidates(const std::map<std::string, const ExpectedTensor*>& expected,
                                           const std::vector<CheckpointTensor>& checkpoint) {
  std::vector<std::string> out(std::begin(kBasePrefixes), std::end(kBasePrefixes));
  std::set<std::string> more;
  auto first_segment = [&](const std::string& name) {
    const std::size_t dot = name.find('.');
    if (dot == std::string::npos || dot == 0) return;
    std::string seg = name.substr(0, dot);
    if (std::find(out.begin(), out.end(), seg) == out.end()) more.insert(std::move(seg));
  };
  for (const auto& [name, _] : expected) first_segment(name);
  for (const auto& t : checkpoint) first_segment(t.name);
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

}  // namespace

std::vector<CheckpointTensor> checkpoint_tensors(
    const std::vector<std::pair<std::string, safetensors::Header>>& files) {
  std::vector<CheckpointTensor> out;
  for (const auto& [file, header] : files)
    for (const auto& t : header.tensors) out.push_back({t.name, t.dtype, t.shape, file});
  return out;
}

TensorTree tree_from_checkpoint(const std::vector<CheckpointTensor>& tensors) {
  Node root;
  for (const auto& t : tensors) {
    const auto parts = split(t.name);
    Node* n = &root;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) n = &n->children[parts[i]];
    n->tensors.push_back(&t);
  }
  TreeBuilder b("CheckpointModel");
  emit(b, root);
  b.set_no_split({kRepeatedBlockClass});
  return b.finish();
}

void adopt_classes(TensorTree& checkpoint_tree, const TensorTree& config_tree) {
  std::map<std::string, const ModuleNode*> by_name;
  for (const auto& m : config_tree.modules) by_name[m.name] = &m;
  for (auto& m : checkpoint_tree.modules)
    if (auto it = by_name.find(m.name); it != by_name.end()) m.class_name = it->second->class_name;
  checkpoint_tree.no_split_classes = config_tree.no_split_classes;
}

TreeComparison compare_trees(const TensorTree& config_tree,
                             const std::vector<CheckpointTensor>& checkpoint,
                             std::optional<DType> expected_dtype) {
  std::vector<ExpectedTensor> expected;
  std::vector<std::string> aliases;
  for (const auto& t : config_tree.tensors) {
    if (t.is_alias()) aliases.push_back(t.name);
    else if (t.kind == TensorKind::kParameter || t.persistent) expected.push_back({t.name, t.shape, t.dtype});
  }
  return compare_state_dict(expected, aliases, checkpoint, expected_dtype);
}

TreeComparison compare_state_dict(const std::vector<ExpectedTensor>& expected_list,
                                  const std::vector<std::string>& alias_list,
                                  const std::vector<CheckpointTensor>& checkpoint,
                                  std::optional<DType> expected_dtype, bool check_shapes) {
  std::map<std::string, const ExpectedTensor*> expected;
  for (const auto& t : expected_list) expected[t.name] = &t;
  const std::set<std::string> aliases(alias_list.begin(), alias_list.end());
  std::map<std::string, const CheckpointTensor*> got;
  for (const auto& t : checkpoint) got[t.name] = &t;

  TreeComparison out;
  // transformers loads a base-model checkpoint into a head model (and back) by a prefix.
  auto overlap = [&](const std::string& add_to_ckpt, const std::string& strip_from_ckpt) {
    std::size_t n = 0;
    for (const auto& [name, _] : got) {
      std::string k = name;
      if (!strip_from_ckpt.empty()) {
        if (k.rfind(strip_from_ckpt, 0) != 0) continue;
        k = k.substr(strip_from_ckpt.size());
      }
      if (expected.count(add_to_ckpt + k)) ++n;
    }
    return n;
  };
  std::string add, strip;
  std::size_t best = overlap("", "");
  for (const std::string& p : prefix_candidates(expected, checkpoint)) {
    const std::string pre = p + ".";
    if (std::size_t n = overlap(pre, ""); n > best) best = n, add = pre, strip.clear();
    if (std::size_t n = overlap("", pre); n > best) best = n, strip = pre, add.clear();
  }
  if (!add.empty()) out.prefix_note = fmt::format("checkpoint names lack the model's prefix '{}'", add);
  if (!strip.empty()) out.prefix_note = fmt::format("checkpoint names carry the prefix '{}'", strip);
  out.add_prefix = add;
  out.strip_prefix = strip;

  std::set<std::string> seen;
  for (const auto& [name, t] : got) {
    std::string k = name;
    if (!strip.empty() && k.rfind(strip, 0) == 0) k = k.substr(strip.size());
    k = add + k;
    auto it = expected.find(k);
    if (it == expected.end()) {
      if (!aliases.count(k)) out.unexpected.push_back(name);  // a stored tied copy is fine
      continue;
    }
    seen.insert(k);
    const ExpectedTensor& e = *it->second;
    if (!check_shapes) continue;
    if (e.shape != t->shape) out.shape_mismatches.push_back({name, e.shape, t->shape});
    const DType want = (expected_dtype && is_floating(e.dtype)) ? *expected_dtype : e.dtype;
    if (want != t->dtype) out.dtype_differences.push_back({name, want, t->dtype});
  }
  for (const auto& [name, _] : expected)
    if (!seen.count(name)) out.missing.push_back(name);
  return out;
}

std::uint64_t checkpoint_parameter_count(const std::vector<CheckpointTensor>& tensors,
                                         const Config* config) {
  std::int64_t bits = 4;
  if (config)
    if (auto q = config->sub("quantization_config")) bits = q->dim_or({"bits", "w_bit"}, 4);
  auto ends_with = [](const std::string& s, const char* suffix) {
    const std::size_t n = std::char_traits<char>::length(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
  };
  std::uint64_t n = 0;
  for (const auto& t : tensors) {
    std::uint64_t numel = 1;
    for (auto d : t.shape) numel *= static_cast<std::uint64_t>(d);
    if (ends_with(t.name, ".qzeros") || ends_with(t.name, ".scales") ||
        ends_with(t.name, ".g_idx") || ends_with(t.name, ".absmax") ||
        ends_with(t.name, ".quant_map") || t.name.find(".quant_state.") != std::string::npos ||
        ends_with(t.name, ".nested_absmax") || ends_with(t.name, ".nested_quant_map") ||
        ends_with(t.name, ".SCB") || ends_with(t.name, ".weight_format"))
      continue;
    if (ends_with(t.name, ".qweight") && (t.dtype == DType::kI32 || t.dtype == DType::kU32))
      n += numel * static_cast<std::uint64_t>(32 / bits);
    else if (t.dtype == DType::kU8 && ends_with(t.name, ".weight") && t.shape.size() == 2 &&
             t.shape[1] == 1)
      n += numel * 2;  // bitsandbytes 4-bit: two values per byte, stored [n/2, 1]
    else
      n += numel;
  }
  return n;
}

}  // namespace memfit
