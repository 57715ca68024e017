// memfit/memory/will_it_run.h — "will it run?": inference, training and GPU fit for one model, the
// shared core of `memfit estimate --context/--train/--vram/--gpu …` and api::inference().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memfit/error.h"
#include "memfit/memory/estimate.h"
#include "memfit/memory/gpu_fit.h"
#include "memfit/memory/inference.h"
#include "memfit/memory/training.h"

namespace memfit {

inline constexpr std::int64_t kDefaultContext = 4096;  // capped at the model's own maximum

struct RunOptions {
  std::optional<std::int64_t> context;  // default: min(4096, the model's max positions)
  std::int64_t batch = 1;
  std::string kv_dtype;  // "" → the weights' compute dtype
  Engine engine = Engine::kTransformers;
  std::string dtype;     // "" → config torch_dtype (float32 if none); float32/float16/bfloat16,
                         // or int8 / int4 / nf4 / fp4 / fp8 (bitsandbytes / fp8 quantization)
  AttentionImpl attention = AttentionImpl::kSdpa;
  double overhead_bytes = kDefaultOverheadBytes;
  std::int64_t encoder_length = 0;
  std::optional<double> vram_bytes;
  std::string gpu;
  double gpu_memory_utilization = 0.9;  // vLLM's default share of the GPU
  std::optional<TrainingOptions> train;  // sequence_length/batch come from context/batch
};

struct RunReport {
  std::string weights_source;  // "config", "checkpoint", "quantization_config", "--dtype"
  std::string quantization;    // scheme description, "" when none
  std::int64_t model_max_context = 0;
  bool generative = false;
  bool transformer = false;    // the config gave transformer dims (activations are estimated)
  AttentionLayout layout;      // empty for non-generative models
  InferenceEstimate inference;
  std::optional<TrainingEstimate> training;
  std::optional<TrainingOptions> training_options;
  std::optional<FitReport> fit;
  std::vector<std::string> notes;
};

Result<RunReport> will_it_run(const Model& model, const RunOptions& options);
// build_model() then will_it_run().
Result<RunReport> will_it_run(const EstimateRequest& request, const RunOptions& options);

}  // namespace memfit
