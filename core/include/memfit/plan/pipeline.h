// memfit/plan/pipeline.h — a model split across hosts (pipeline parallelism): each host holds one
// contiguous range of the model's placement units (its stage) and only activations cross the
// network, one hidden state per token per stage boundary.
//
// Stages are balanced by memory — each host's share of weights + KV cache in proportion to its
// budgets — or, with Balance::kCompute, by estimated stage time (each host's speed from its GPU
// kind) while every share still fits its host. Inside a host the request's strategy (auto, fit, …)
// maps the stage onto its devices exactly as a one-host plan would. Speeds are a roofline
// estimate: memory-bound decode, each device reading what it holds once per step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "memfit/model/model.h"
#include "memfit/plan/nodes.h"
#include "memfit/plan/plan.h"

namespace memfit::plan {

enum class Balance { kMemory, kCompute };

// Bandwidths a stage's time is estimated with where the request does not give them. The defaults
// are typical, not measured: PCIe 4.0 x16's usable rate, dual-channel DDR5, an NVMe drive, and an
// unknown GPU taken as a 1 TB/s part (name the GPU per node for its datasheet figure).
struct StageSpeeds {
  double gpu_bytes_per_s = 1e12;   // when the node names no GPU kind
  double pcie_bytes_per_s = 25e9;  // CPU-held weights streamed to the node's execution GPU
  double cpu_bytes_per_s = 50e9;   // weights computed on a CPU (a node without GPUs)
  double disk_bytes_per_s = 3e9;   // disk-offloaded weights read per step
};

struct PipelineRequest {
  PlanRequest plan;          // the per-node strategy, dtype, context, batch, …; max_memory unused
  std::vector<NodeSpec> nodes;
  LinkSpec link;
  Balance balance = Balance::kMemory;
  StageSpeeds speeds;
};

struct PipelineStage {
  std::string node;
  std::vector<std::string> units;  // the placement units it holds, in order
  std::uint64_t weights = 0;       // bytes, as the planner sizes them
  std::uint64_t kv_cache = 0;      // its layers' KV cache at context × batch
  PlanResult plan;                 // its own device map and per-device bytes
  double step_s = 0;               // estimated decode step at the full batch
  double micro_step_s = 0;         // … at one micro-batch
};

struct PipelinePlan {
  Strategy strategy = Strategy::kAuto;
  std::string model_class;
  Balance balance = Balance::kMemory;
  LinkSpec link;
  std::vector<PipelineStage> stages;
  std::int64_t hidden = 0;
  std::string activation_dtype;         // torch name
  std::uint64_t bytes_per_boundary = 0;  // per decode step: batch × hidden × element bytes
  std::uint64_t bytes_per_token = 0;     // one sequence's token, across every boundary
  double link_s = 0;                     // per decode step: every hop, incl. the token back to stage 0
  std::int64_t batch = 1, micro_batches = 1;
  double decode_tokens_per_s = 0;        // the batch going through the stages in turn
  double pipelined_tokens_per_s = 0;     // GPipe: micro_batches in flight
  std::vector<std::string> explain;
};

Result<PipelinePlan> plan_pipeline(const Model& model, const PipelineRequest& req);
nlohmann::ordered_json pipeline_to_json(const PipelinePlan& p);

}  // namespace memfit::plan
