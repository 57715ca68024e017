// native/torch/pipeline_stage.h — which blocks each rank of a pipeline holds (generate --nodes),
// and what a rank loads and runs of them.
//
// A program's stages are the embedding, one per block, and the head (model_program.h). Rank r
// runs a contiguous range of them: rank 0 from the embedding, the last rank to the head; only
// activations cross between ranks. The split is `--stages 0-11,12-23` (each rank's blocks), or
// by default the one `memfit plan --nodes` makes for identical hosts (core's plan_pipeline,
// balanced by bytes), so every rank computes the same split by itself.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "load_plan.h"
#include "memfit/plan/strategy.h"
#include "model_program.h"
#include "process_group.h"

namespace memfit::torchrt {

struct StageSplit {
  std::vector<std::pair<std::int64_t, std::int64_t>> blocks;  // per rank: first, last block
  std::string text() const;                                  // "0-11,12-23"
};

// "0-11,12-23" (a single block as "5"): one range per rank, contiguous, covering every block.
// Throws Failure(kUsage) naming the entry.
StageSplit parse_stages(const std::string& text, int ranks, std::int64_t blocks);

// The split and this rank's device map as `memfit plan --nodes` makes them for `ranks` identical
// hosts with `budgets` each (parse_max_memory's form) and `strategy` inside each host.
struct PlannedStages {
  StageSplit split;
  plan::DeviceMap rank_map;  // the stage's own modules only
};
PlannedStages plan_stages(const LoadPlan& lp, const ModelProgram& program, int ranks, int rank,
                          const plan::MaxMemory& budgets, plan::Strategy strategy);

// A tied weight this stage reads under another stage's name (GPT-2's head is the embedding
// matrix, stored as transformer.wte.weight) goes where the map puts the name this stage knows it
// by (lm_head.weight): the planner maps only its own modules.
void cover_tied_weights(plan::DeviceMap& map, const TensorTree& tree, const std::vector<std::string>& tensors);

// What rank `rank` loads (the tensors of its program stages, tied ones included) and runs.
StageSelection select_stage(const ModelProgram& program, const StageSplit& split, int rank);

// What ranks must agree on: the config, the checkpoint's tensors (names, dtypes, shapes, sizes),
// the split, the weights' dtype, and `options` (generation options the caller adds).
Fingerprint stage_fingerprint(const LoadPlan& lp, const StageSplit& split, int ranks, const std::string& options);

}  // namespace memfit::torchrt
