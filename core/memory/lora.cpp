#include "memfit/memory/lora.h"

#include <fmt/format.h>

#include "memfit/error.h"
#include "memfit/model/config.h"

namespace memfit {
namespace {

bool matches(const std::string& name, const std::string& target) {
  return name == target ||
         (name.size() > target.size() &&
          name.compare(name.size() - target.size() - 1, target.size() + 1, "." + target) == 0);
}

LoraAdapter adapter_for(const LinearLayer& l, const std::string& name, std::int64_t r) {
  LoraAdapter a;
  a.module = name;
  a.a_rows = r;
  a.a_cols = l.in;
  a.b_rows = l.out;
  a.b_cols = r;
  return a;
}

}  // namespace

std::vector<std::string> parse_lora_targets(std::string_view s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t end = s.find(',', start);
    if (end == std::string_view::npos) end = s.size();
    std::string_view t = s.substr(start, end - start);
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
    if (!t.empty()) out.emplace_back(t);
    start = end + 1;
  }
  return out;
}

LoraPlan lora_plan(const TensorTree& tree, std::int64_t vocab, std::int64_t rank,
                   const std::vector<std::string>& targets) {
  if (rank < 1 || rank > kMaxDim)
    throw Error(ErrorCode::kInvalidArgument, fmt::format("LoRA rank must be at least 1, got {}", rank));
  if (targets.empty())
    throw Error(ErrorCode::kInvalidArgument, "LoRA: no target modules given (names, or all-linear)");
  const bool all_linear = targets.size() == 1 && (targets[0] == "all-linear" || targets[0] == "ALL-LINEAR");
  std::string names;
  for (std::size_t i = 0; i < targets.size(); ++i) names += (i ? ", " : "") + targets[i];
  return lora_plan(
      tree, vocab,
      [&](const std::string& name, const LinearLayer* l) -> std::optional<std::int64_t> {
        if (all_linear) return l && l->is_linear() && !l->output_head ? std::optional<std::int64_t>(rank) : std::nullopt;
        for (const auto& t : targets)
          if (matches(name, t)) return rank;
        return std::nullopt;
      },
      "{" + names + "}", " (PEFT matches a module whose name is a target or ends with '.' + target)");
}

LoraPlan lora_plan(const TensorTree& tree, std::int64_t vocab, const LoraSelect& select,
                   std::string_view targets_text, std::string_view how_matched) {
  const std::vector<LinearLayer> layers = linear_layers(tree, vocab);
  std::vector<const LinearLayer*> by_module(tree.modules.size(), nullptr);  // module → its layer
  for (const auto& l : layers) by_module[static_cast<std::size_t>(l.module)] = &l;

  LoraPlan plan;
  for (std::size_t mi = 1; mi < tree.modules.size(); ++mi) {
    const std::string& name = tree.modules[mi].name;
    const LinearLayer* l = by_module[mi];
    const std::optional<std::int64_t> rank = select(name, l);
    if (!rank) continue;
    if (!l)
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("LoRA: target module '{}' ({}) is not supported; PEFT's LoRA wraps "
                              "torch.nn.Linear, Embedding, Conv1d/2d/3d and transformers' Conv1D",
                              name, tree.modules[mi].class_name));
    if (*rank < 1 || *rank > kMaxDim)
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("LoRA rank must be at least 1, got {} (module '{}')", *rank, name));
    plan.adapters.push_back(adapter_for(*l, name, *rank));
    plan.trainable_parameters += plan.adapters.back().parameters();
  }
  if (plan.adapters.empty())
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("LoRA: target modules {} not found in the base model{}", targets_text,
                            how_matched));
  return plan;
}

}  // namespace memfit
