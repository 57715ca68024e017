#include "pipeline_stage.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "failure.h"
#include "memfit/plan/pipeline.h"

namespace memfit::torchrt {
namespace {

[[noreturn]] void bad_stages(const std::string& why) {
  throw Failure{FailureKind::kUsage, fmt::format("--stages: {}", why)};
}

std::int64_t block_number(const std::string& s, const std::string& entry) {
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < 0) bad_stages(fmt::format("'{}' is not FIRST-LAST (block numbers)", entry));
  return v;
}

// A program runs the embedding, one stage per block, then the head: block b is stage b + 1.
std::int64_t program_blocks(const ModelProgram& program) {
  const auto& st = program.stages();
  if (st.size() < 3 || st.front().name != "embed" || st.back().name != "head")
    throw Failure{FailureKind::kUnsupported, "this family's program is not embed → blocks → head: it cannot be split"};
  return static_cast<std::int64_t>(st.size()) - 2;
}

// FNV-1a, 64 bits: a stable digest (the same on every host and build) for the fingerprint.
class Digest {
 public:
  void add(std::string_view s) {
    for (const char c : s) h_ = (h_ ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    h_ = (h_ ^ 0xff) * 0x100000001b3ull;  // separator: "ab","c" ≠ "a","bc"
  }
  std::string hex() const { return fmt::format("{:016x}", h_); }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ull;
};

}  // namespace

std::string StageSplit::text() const {
  std::vector<std::string> parts;
  for (const auto& [a, b] : blocks) parts.push_back(a == b ? std::to_string(a) : fmt::format("{}-{}", a, b));
  return fmt::format("{}", fmt::join(parts, ","));
}

StageSplit parse_stages(const std::string& text, int ranks, std::int64_t blocks) {
  StageSplit split;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string entry = text.substr(start, comma - start);
    const std::size_t dash = entry.find('-');
    const std::int64_t a = block_number(entry.substr(0, dash), entry);
    const std::int64_t b = dash == std::string::npos ? a : block_number(entry.substr(dash + 1), entry);
    const std::int64_t expected = split.blocks.empty() ? 0 : split.blocks.back().second + 1;
    if (a != expected || b < a)
      bad_stages(fmt::format("'{}': ranges must be contiguous from block 0 (expected one starting at {})", entry, expected));
    split.blocks.emplace_back(a, b);
    start = comma + 1;
  }
  if (static_cast<int>(split.blocks.size()) != ranks)
    bad_stages(fmt::format("'{}' gives {} ranges for {} ranks", text, split.blocks.size(), ranks));
  if (split.blocks.back().second != blocks - 1)
    bad_stages(fmt::format("'{}' ends at block {}; the model has blocks 0 … {}", text, split.blocks.back().second, blocks - 1));
  return split;
}

PlannedStages plan_stages(const LoadPlan& lp, const ModelProgram& program, int ranks, int rank,
                          const plan::MaxMemory& budgets, plan::Strategy strategy) {
  const std::int64_t blocks = program_blocks(program);
  if (blocks < ranks)
    throw Failure{FailureKind::kUsage, fmt::format("--nodes {}: the model has {} blocks, fewer than ranks", ranks, blocks)};
  plan::PipelineRequest req;
  req.plan.strategy = strategy;
  req.plan.dtype = lp.dtype;
  for (int r = 0; r < ranks; ++r) req.nodes.push_back({fmt::format("rank{}", r), budgets});
  const plan::PipelinePlan p = value_or_raise(plan::plan_pipeline(lp.model, req));
  // Each block's rank, from the units its host holds (block stages are named as modules).
  std::vector<int> owner(static_cast<std::size_t>(blocks), -1);
  for (std::size_t r = 0; r < p.stages.size(); ++r)
    for (const std::string& unit : p.stages[r].units)
      for (std::int64_t b = 0; b < blocks; ++b)
        if (program.stages()[static_cast<std::size_t>(b + 1)].name == unit) owner[static_cast<std::size_t>(b)] = static_cast<int>(r);
  PlannedStages out;
  for (int r = 0; r < ranks; ++r) {
    const auto first = std::find(owner.begin(), owner.end(), r);
    const auto last = std::find(owner.rbegin(), owner.rend(), r);
    if (first == owner.end())
      throw Failure{FailureKind::kUsage, fmt::format("--nodes {}: the planner gave rank {} no block; give --stages", ranks, r)};
    out.split.blocks.emplace_back(first - owner.begin(), owner.rend() - last - 1);
  }
  out.rank_map = p.stages[static_cast<std::size_t>(rank)].plan.device_map;
  return out;
}

void cover_tied_weights(plan::DeviceMap& map, const TensorTree& tree, const std::vector<std::string>& tensors) {
  for (const std::string& name : tensors) {
    if (plan::device_of(map, name)) continue;
    const int target = tree.find_tensor(name);
    for (const TensorInfo& t : tree.tensors)
      if (t.tied_to == target && target >= 0)
        if (const plan::Device* d = plan::device_of(map, t.name)) {
          map.emplace_back(name, *d);
          break;
        }
  }
}

StageSelection select_stage(const ModelProgram& program, const StageSplit& split, int rank) {
  const std::int64_t blocks = program_blocks(program);
  if (split.blocks.back().second != blocks - 1)
    throw Failure{FailureKind::kUsage, fmt::format("--stages '{}' does not end at the model's last block ({})",
                                                   split.text(), blocks - 1)};
  const auto& [a, b] = split.blocks.at(static_cast<std::size_t>(rank));
  StageSelection s;
  s.first_stage = rank == 0 ? 0 : static_cast<std::size_t>(a + 1);
  s.end_stage = rank + 1 == static_cast<int>(split.blocks.size()) ? program.stages().size() : static_cast<std::size_t>(b + 2);
  for (std::size_t k = s.first_stage; k < s.end_stage; ++k)
    for (const std::string& name : program.stages()[k].weights)
      if (std::find(s.tensors.begin(), s.tensors.end(), name) == s.tensors.end()) s.tensors.push_back(name);
  return s;
}

Fingerprint stage_fingerprint(const LoadPlan& lp, const StageSplit& split, int ranks, const std::string& options) {
  Digest config, checkpoint;
  config.add(lp.model.config.json().dump());
  for (const auto& t : lp.source.tensors) {
    checkpoint.add(t.name);
    checkpoint.add(safetensors_name(t.dtype));
    checkpoint.add(fmt::format("{}", fmt::join(t.shape, ",")));
    checkpoint.add(std::to_string(t.nbytes));
  }
  return {{"number of ranks", std::to_string(ranks)},
          {"config.json (digest)", config.hex()},
          {"checkpoint (digest of its tensors' names, dtypes and shapes)", checkpoint.hex()},
          {"stage split", split.text()},
          {"weights dtype", std::string(torch_name(lp.dtype))},
          {"generation options", options}};
}

}  // namespace memfit::torchrt
