// native/torch/executor.h — runs a model block by block over placed weights (Accelerate's
// AlignDevicesHook + cpu_offload / disk_offload, with prefetch).
//
// Before stage k runs, its weights are brought to the execution device (resident ones are used
// in place); after it, streamed copies are released and disk pages dropped. With prefetch, the
// weights of stages k+1 … k+depth are fetched on background threads while k computes (on a GPU:
// a separate CUDA stream, pinned staging, an event the compute stream waits on). Every path
// performs the same dtype conversions on the same bytes, so logits are bitwise identical whether
// weights are resident, on the CPU or on disk, with or without prefetch.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <ATen/ATen.h>

#include "model_program.h"
#include "weight_store.h"

namespace memfit::torchrt {

struct ExecOptions {
  bool prefetch = true;
  int prefetch_depth = 1;               // stages fetched ahead of the running one
  at::ScalarType compute_dtype = at::kFloat;
  bool evict_page_cache = false;        // also drop disk weights from the page cache after use
                                        // (benchmarks: every forward reads from storage)
};

struct ExecStats {
  std::uint64_t streamed_bytes = 0;     // bytes brought from CPU/disk to the execution device
  double wait_seconds = 0;              // time the compute waited for weights
  double seconds = 0;                   // wall time of the last forward
};

class Executor {
 public:
  Executor(const LoadedModel& model, const ModelProgram& program, ExecOptions options = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // logits [B, T, V] float32 on the CPU for input ids [B, T] (int64). With a state whose
  // use_cache is true, keys/values are kept there and `past` advances (generation).
  at::Tensor forward(const at::Tensor& input_ids, ForwardState* state = nullptr);
  // Greedy decoding with a KV cache: the `new_tokens` ids after `prompt` (one row).
  std::vector<std::int64_t> generate(const std::vector<std::int64_t>& prompt, int new_tokens);

  const ExecStats& stats() const { return stats_; }
  const ExecOptions& options() const { return options_; }

 private:
  struct Fetched;
  std::shared_ptr<Fetched> fetch(std::size_t stage) const;
  void release(Fetched& f) const;

  const LoadedModel& model_;
  const ModelProgram& program_;
  ExecOptions options_;
  ExecStats stats_;
  std::vector<int> evict_fds_;  // per checkpoint file, when evict_page_cache (else empty)
  struct CopyStream;           // CUDA only: the stream prefetch copies run on
  std::unique_ptr<CopyStream> copy_stream_;
};

// cpu_offload_with_hook: a model of a pipeline whose streamed weights are brought to the
// execution device as a whole before it runs, and stay there until the next model's hook runs
// (or offload() is called) — Accelerate's UserCpuOffloadHook chain.
class OffloadHook {
 public:
  explicit OffloadHook(const LoadedModel& model, OffloadHook* previous = nullptr)
      : model_(model), previous_(previous) {}
  // Offloads the previous model of the pipeline, then makes this one resident.
  void pre_forward();
  void offload();  // drops the resident copies (weights go back to their CPU/disk placement)
  bool on_device() const { return !resident_.empty(); }
  // The resident weights, for an Executor built over them (see resident_model()).
  const LoadedModel& resident_model() const;

 private:
  const LoadedModel& model_;
  OffloadHook* previous_;
  std::vector<at::Tensor> resident_;
  std::unique_ptr<LoadedModel> view_;  // model_ with every weight on the execution device
};

}  // namespace memfit::torchrt
