// memfit/memory/estimate.h — config.json in, memory report out.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "memfit/error.h"
#include "memfit/model/checkpoint_tree.h"
#include "memfit/model/estimate_request.h"
#include "memfit/model/model.h"
#include "memfit/model/tensor_tree.h"

namespace memfit {

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

// Where one figure of a report comes from: exact (the checkpoint's headers, or the family's
// tree from the config) or a guess (an unknown family's generic config keys).
struct FigureBasis {
  std::string figure;  // "weights", "kv_cache"
  bool exact = true;
  std::string basis;   // "checkpoint headers", "generic config keys (num_hidden_layers, …)"
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
  // Repeated modules (routed experts), when the tree was compact: module_sizes lists the first
  // copy (and what lies below it) once, at one copy's size; here is how many siblings it stands
  // for, named by counting up its last component. Empty for a tree built with every name.
  std::vector<std::pair<std::string, std::int64_t>> module_repeats;
  std::vector<std::string> notes;  // what the mode did that a user should know
  std::string source = "config";   // "config" or "checkpoint"
  double stored_bytes = 0;         // checkpoint source: bytes of the tensors as stored
  std::string checkpoint_format;   // checkpoint source: EstimateRequest::checkpoint_format
  std::optional<TreeComparison> comparison;  // config vs checkpoint, when both are known
  std::vector<FigureBasis> figures;  // which figures are exact and which are guesses
};

// report.module_sizes with every copy of each repeated module named, in first-seen order:
// accelerate's whole compute_module_sizes dict (a named tree's report comes back as it is).
std::vector<std::pair<std::string, double>> named_module_sizes(const Report& report);

Result<Report> estimate(const Model& model);
// build_model() then estimate(): for callers that need nothing else of the model.
Result<Report> estimate(const EstimateRequest& req);

// accelerate's table for a report (compat or not: the same layout).
std::string render_table(const Report& report);
std::string mode_name(Mode m);
// The rows a mode's table has by default, in order: also the only dtypes it accepts.
const std::vector<std::string>& estimate_dtypes(Mode mode);

}  // namespace memfit
