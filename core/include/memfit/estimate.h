// memfit/estimate.h — config.json in, memory report out.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "memfit/checkpoint_tree.h"
#include "memfit/error.h"
#include "memfit/tensor_tree.h"

namespace memfit {

enum class Mode {
  kAccelerate,  // reproduce `accelerate estimate-memory` 0.30.1 + transformers 4.40 exactly
  kMemfit,      // memfit's own, honest figures
};

struct EstimateRequest {
  std::string config_text;  // contents of config.json; may be empty for timm (name is enough)
  std::string name;         // model id/path: the table title, and the timm variant
  std::string library;      // "transformers", "timm", or "" to detect
  Mode mode = Mode::kMemfit;
  std::vector<std::string> dtypes;  // empty: the mode's default list
  std::string class_override;       // --class
  // Tensors of the checkpoint's headers (safetensors, or a .bin's pickled state dict), when
  // known: memfit's exact path. checkpoint_format says which ("safetensors", "pytorch_bin").
  std::vector<CheckpointTensor> checkpoint;
  std::string checkpoint_format = "safetensors";
  enum class Source { kAuto, kConfig, kCheckpoint } source = Source::kAuto;
};

struct TrainingPart {
  std::string name;  // "weights", "gradients", "fp32 master weights", "adam moments"
  double bytes = 0;
};

struct ReportRow {
  std::string dtype;
  double largest_layer_bytes = 0;
  double total_bytes = 0;
  std::optional<double> training_bytes;  // nullopt: N/A
  std::vector<TrainingPart> training_parts;  // memfit mode only
  std::string largest_layer, total, training;  // formatted as accelerate does
};

struct Report {
  std::string name;
  std::string library;
  std::string model_type;
  std::string model_class;
  Mode mode = Mode::kMemfit;
  std::uint64_t parameters = 0;
  double buffers_bytes = 0;
  std::vector<ReportRow> rows;
  std::vector<std::string> largest_layer_names;
  std::vector<std::pair<std::string, double>> module_sizes;  // float32 bytes, first-seen order
  std::vector<std::string> notes;  // what the mode did that a user should know
  std::string source = "config";   // "config" or "checkpoint"
  double stored_bytes = 0;         // checkpoint source: bytes of the tensors as stored
  std::string checkpoint_format;   // checkpoint source: EstimateRequest::checkpoint_format
  std::optional<TreeComparison> comparison;  // config vs checkpoint, when both are known
};

// The tree the family describes for the selected class, with the buffers of every transformers
// era (estimate() and the planner narrow it with for_era() for their mode).
Result<TensorTree> build_tree(const EstimateRequest& req, std::string* model_type = nullptr,
                              std::vector<std::string>* notes = nullptr);
Result<Report> estimate(const EstimateRequest& req);

// accelerate's table for a report (compat or not: the same layout).
std::string render_table(const Report& report);
std::string mode_name(Mode m);

}  // namespace memfit
