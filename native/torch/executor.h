// native/torch/executor.h — runs a model block by block over placed weights (Accelerate's
// AlignDevicesHook + cpu_offload / disk_offload, with prefetch).
//
// Before stage k runs, its weights are brought to the execution device (resident ones are used
// in place); after it, streamed copies are released. Disk weights are read (pread, one read per
// run of adjacent tensors: staging_layout.h) into a staging buffer from a small pool that is
// reused across stages and forwards — depth + 1 buffers in steady state, pinned where a GPU
// exists. With prefetch, the weights of stages k+1 … k+depth are fetched on background threads,
// one stage after another in stage order, while k computes (on a GPU: a separate CUDA stream,
// an event the compute stream waits on). Every path performs the same dtype conversions on the
// same bytes, so logits are bitwise identical whether weights are resident, on the CPU or on
// disk, with or without prefetch.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <ATen/ATen.h>

#include "file_reader.h"
#include "model_program.h"
#include "staging_layout.h"
#include "weight_store.h"

namespace memfit::torchrt {

struct ExecOptions {
  bool prefetch = true;
  int prefetch_depth = 1;               // stages fetched ahead of the running one
  at::ScalarType compute_dtype = at::kFloat;  // compute_dtype_for(): float32 on a CPU
  bool prefetch_next_forward = true;    // at the end of a forward, fetch the next one's first
                                        // stages (generation calls forward once per token)
  bool evict_page_cache = false;        // also drop disk weights from the page cache after use
                                        // (benchmarks: every forward reads from storage)
  // The KV cache's dtype (ForwardState::cache_dtype). Unset: the model's load dtype, as
  // transformers keeps its cache and memfit's planner counts it.
  std::optional<at::ScalarType> cache_dtype = std::nullopt;
  // A pipeline stage (generate --nodes, pipeline_stage.h): run only the program's stages
  // [first_stage, end_stage). Without the first, a forward starts from ForwardState::hidden as
  // the caller set it; without the last, it leaves its output there and returns no logits.
  // end_stage 0: to the end.
  std::size_t first_stage = 0, end_stage = 0;
};

struct ExecStats {
  std::uint64_t streamed_bytes = 0;     // bytes brought from CPU/disk to the execution device
  std::uint64_t read_bytes = 0;         // bytes read from disk files (page-rounded runs)
  double read_seconds = 0;              // time spent in those reads (on prefetch threads too)
  std::size_t staging_buffers = 0;      // staging buffers allocated so far (reused: depth + 1)
  std::uint64_t staging_buffer_bytes = 0;  // the size of each
  std::size_t most_reads_at_once = 0;   // stages read concurrently, at most (1: one stream)
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
  // use_cache is true, keys/values are kept there and `past` advances (generation). An undefined
  // tensor when the executor's stage range ends before the head (ExecOptions::end_stage).
  at::Tensor forward(const at::Tensor& input_ids, ForwardState* state = nullptr);
  // Greedy decoding with a KV cache: the `new_tokens` ids after `prompt` (one row).
  std::vector<std::int64_t> generate(const std::vector<std::int64_t>& prompt, int new_tokens);

  const ExecStats& stats() const { return stats_; }
  const ExecOptions& options() const { return options_; }

 private:
  struct Fetched;
  // A stage's disk weights: where each lands in its staging buffer (offsets per name of the
  // stage's weight list; unused for weights not on disk).
  struct StageStaging {
    StagingLayout layout;
    std::vector<std::uint64_t> offsets;
    std::vector<char> gathered;  // per name: read by rows at run time (not fetched whole)
    struct Rows {
      const StoredWeight* weight;
      std::size_t file;
      std::string name;
    };
    std::vector<Rows> rows;  // the gathered disk weights
  };
  // Names what a forward cannot take before anything runs: no ids, an id outside the embedding
  // table, more positions than a learned position table has.
  void check_input(const at::Tensor& input_ids, std::int64_t past) const;
  std::shared_ptr<Fetched> fetch(std::size_t stage) const;
  void release(Fetched& f);
  void gather_rows(std::size_t stage, const ForwardState& s, StageWeights& w);
  void plan_staging();
  at::Tensor acquire_staging() const;  // a free pooled buffer, else a new one
  std::uint8_t* staged_base(const at::Tensor& buffer) const;

  const LoadedModel& model_;
  const ModelProgram& program_;
  ExecOptions options_;
  ExecStats stats_;
  std::vector<std::unique_ptr<io::FileReader>> files_;  // files disk weights are read from
  std::vector<StageStaging> staging_;                     // per stage
  std::uint64_t staging_bytes_ = 0;                       // the largest stage's buffer
  mutable std::atomic<std::size_t> reading_{0}, most_reading_{0};  // stage reads in flight, their peak
  mutable std::mutex pool_mutex_;
  mutable std::vector<at::Tensor> pool_;  // a buffer is free when only the pool refers to it
  // Fetches in flight (stage, result), in stage order; each waits for the one before it (shared:
  // the next fetch holds the previous one's future). ~Executor() drains it first: a fetch still
  // reading uses files_, the pool and the copy stream.
  std::deque<std::pair<std::size_t, std::shared_future<std::shared_ptr<Fetched>>>> ahead_;
  struct CopyStream;           // CUDA only: the stream prefetch copies run on
  std::unique_ptr<CopyStream> copy_stream_;
};

// Compute threads when the user names none: one per core — but one fewer when a CPU execution
// reads disk weights on a prefetch thread. LibTorch's and OpenBLAS's workers spin at their
// barriers; with the reader taking a core, each barrier waits for a descheduled worker (2 cores,
// 2 workers + reader: a layer runs an order of magnitude slower than with 1 worker + reader).
int default_compute_threads(const LoadedModel& model, const ExecOptions& options);

// The dtype blocks compute in when the user names none: the weights' own on a GPU; float32 on a
// CPU, where LibTorch 1.13 has no half-precision GEMM and its bfloat16 is slow without AVX-512 —
// half-precision weights stay half in memory and are cast block by block as they are staged.
at::ScalarType default_compute_dtype(const LoadedModel& model);

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
