// native/torch/pipeline_rank.h — one rank of pipeline-parallel generation (`memfit generate DIR
// --nodes N --rank R --master HOST:PORT`; docs/pipeline.md, "The runtime").
//
// Each rank loads and runs one stage (pipeline_stage.h). Rank 0 tokenizes, runs its blocks and
// streams the text; the last rank computes the logits, chooses each next id (the same sampler and
// seed as a single process, one sampler per prompt) and sends it back to rank 0, which decides
// whether that prompt goes on (EOS, --stop, --max-new-tokens). Each stage keeps its own layers' KV
// cache, one per prompt.
//
// Several prompts are micro-batches, GPipe-style: rank 0 sends every prompt's prefill down the
// line, then each prompt's next step as soon as its id comes back, so while stage 1 works on
// micro-batch k, stage 0 works on k+1. Every message goes in the order it was sent.
//
// What crosses a boundary, one message per hop: a line-up first (the prompts' lengths and
// capacities, the sender's hidden size and dtype), then per step [op, prompt, tokens | ids |
// hidden states] packed into one byte buffer — a receiver knows each message's size ahead (the
// prefills come first, in prompt order; every later step is one token), as Gloo and NCCL need.
// Back to rank 0: [prompt, id]. At the end rank 0 sends "stop" down the line.
//
// Before loading, ranks compare fingerprints (config, checkpoint, split, dtype, generation
// options) at the rendezvous and refuse to run when one differs; after loading they wait for each
// other (--load-timeout); from then on every wait is bounded by --timeout.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "command_setup.h"
#include "generation.h"
#include "pipeline_stage.h"
#include "process_group.h"
#include "torch_commands.h"

namespace memfit::torchrt {

// A rank's decode-phase figures, gathered by rank 0 at the end.
struct RankStats {
  int rank = 0;
  double decode_forward_seconds = 0;  // its blocks' forwards for steps after a prompt's prefill
  int decode_steps = 0;
  LinkStats link;
};

struct PipelineRun {
  std::vector<GenerateResult> results;  // per prompt
  std::vector<RankStats> ranks;         // every rank's, rank 0 first
  // With one prompt (nothing overlaps): the decode time per token during which no rank computed —
  // the messages' hops, packing and waking up. -1 with several prompts.
  double link_seconds_per_token = -1;
};

// The last rank's per-prompt request: its sampler (`choose`) and logits log (`on_logits`).
using PromptRequests = std::function<GenerateRequest(std::size_t prompt)>;

class PipelineRank {
 public:
  // Joins the rendezvous at --master (rank 0 listens there). Throws Failure naming bad options.
  explicit PipelineRank(const GenerateArgs& args);
  ~PipelineRank();

  int rank() const { return link_->rank(); }
  // What the load calls back with the model: picks the stage, checks every rank agrees, connects
  // the process group — all before a weight is loaded.
  StagePicker picker();
  // After the load: waits for every rank's (--load-timeout).
  void loaded(const ExecSetup& setup);

  // Rank 0: generation of every prompt through every rank (micro-batches in flight together);
  // sends "stop" at the end and waits for the others.
  PipelineRun generate(ExecSetup& setup, const std::vector<GenerateRequest>& requests);
  // Ranks > 0: runs the steps rank 0 sends until "stop"; the last rank chooses ids by each
  // prompt's request (argmax when `choose` is unset).
  void serve(ExecSetup& setup, const PromptRequests& requests);

  // Runs `fn`; a failure is prefixed with this rank and recorded for the other ranks.
  template <typename Fn>
  auto reporting(Fn&& fn) -> decltype(fn());

  const StageSplit& split() const { return split_; }

 private:
  [[noreturn]] void rethrow_named();
  void publish_stats(const RankStats& mine);
  const GenerateArgs& args_;
  std::unique_ptr<ProcessGroupLink> link_;
  StageSplit split_;
  bool loading_ = false;     // between the rendezvous and every rank's load: a failure is "failed to load"
  bool generating_ = false;  // past the store's barriers: the others learn of a failure from the process group
};

template <typename Fn>
auto PipelineRank::reporting(Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (...) {
    rethrow_named();
  }
}

// `memfit generate --nodes N --rank R` for R > 0: the stage's serving loop (no tokenizer).
void serve_pipeline_rank(const GenerateArgs& args, const PromptRequests& requests);

}  // namespace memfit::torchrt
