// native/torch/pipeline_rank.h — one rank of pipeline-parallel generation (`memfit generate DIR
// --nodes N --rank R --master HOST:PORT`; docs/pipeline.md, "The runtime").
//
// Each rank loads and runs one stage (pipeline_stage.h). Rank 0 tokenizes, runs its blocks and
// streams the text; each step it sends the next rank a header, the step's token ids and the
// hidden states [batch, new tokens, hidden]; every rank runs its blocks on them and passes its
// hidden states on; the last rank computes the logits, chooses the next id (the same sampler and
// seed as a single process) and sends it back to rank 0, which decides whether to go on (EOS,
// --stop, --max-new-tokens) and finally sends "stop" down the line. Each stage keeps its own
// layers' KV cache.
//
// Before loading, ranks compare fingerprints (config, checkpoint, split, dtype, generation
// options) at the rendezvous and refuse to run when one differs; after loading they wait for each
// other (--load-timeout); from then on every wait is bounded by --timeout.
#pragma once

#include <memory>

#include "command_setup.h"
#include "generation.h"
#include "pipeline_stage.h"
#include "process_group.h"
#include "torch_commands.h"

namespace memfit::torchrt {

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

  // Rank 0: generation through every rank; sends "stop" at the end and waits for the others.
  GenerateResult generate(ExecSetup& setup, const GenerateRequest& request);
  // Ranks > 0: runs the steps rank 0 sends until "stop"; the last rank chooses ids by
  // `request.choose` (argmax when unset).
  void serve(ExecSetup& setup, const GenerateRequest& request);

  // Runs `fn`; a failure is prefixed with this rank and recorded for the other ranks.
  template <typename Fn>
  auto reporting(Fn&& fn) -> decltype(fn());

  const StageSplit& split() const { return split_; }

 private:
  [[noreturn]] void rethrow_named();
  const GenerateArgs& args_;
  std::unique_ptr<ProcessGroupLink> link_;
  StageSplit split_;
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
void serve_pipeline_rank(const GenerateArgs& args, const GenerateRequest& sampling);

}  // namespace memfit::torchrt
