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

// The will-it-run options, named as the JSON API names them (docs/api.md); both the CLI and
// api::inference() start from these defaults (memfit/memory/options.h) and set what is given.
struct RunOptions {
  std::optional<std::int64_t> context;  // default: min(kRunDefaults.context, the model's max positions)
  std::int64_t batch = kRunDefaults.batch;
  std::optional<KvDtype> kv_dtype;  // default: the weights' compute dtype
  Engine engine = kRunDefaults.engine;
  // Default: the checkpoint as stored, else config quantization_config and torch_dtype
  // (float32 if none).
  std::optional<WeightDtype> dtype;
  AttentionImpl attention = kRunDefaults.attention;
  double overhead_bytes = kRunDefaults.overhead_bytes;
  std::int64_t encoder_length = 0;
  std::optional<double> vram_bytes;
  std::string gpu;
  double gpu_memory_utilization = kRunDefaults.gpu_memory_utilization;
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
