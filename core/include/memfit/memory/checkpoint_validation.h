// memfit/memory/checkpoint_validation.h — does a checkpoint hold what its config implies?
//
// `memfit validate`: the checkpoint's tensor names (an index's weight_map, or headers with
// shapes and dtypes) against the model's stored form (memfit/memory/stored_form.h), and the
// bytes the config implies against the checkpoint's (an index's metadata.total_size).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memfit/model/checkpoint_tree.h"
#include "memfit/model/model.h"

namespace memfit {

struct CheckpointValidation {
  std::vector<std::string> missing;     // stored-form tensors the checkpoint lacks
  std::vector<std::string> unexpected;  // checkpoint tensors the model does not load
  std::vector<std::string> ignored;     // checkpoint tensors transformers ignores on load
  std::vector<ShapeMismatch> shape_mismatches;      // only with headers
  std::vector<DtypeDifference> dtype_differences;   // only with headers; informative
  std::string prefix_note;
  // The stored form's bytes plus those of the ignored tensors memfit can size (the checkpoint's
  // own bytes with headers; else the tree's, e.g. the 4.40-era rotary inv_freq).
  std::uint64_t expected_total_size = 0;
  std::optional<std::uint64_t> index_total_size;  // metadata.total_size, or the headers' sum
  std::string dtype;         // the float dtype the stored form assumes, and why
  std::vector<std::string> notes;
  bool ok() const {
    return missing.empty() && unexpected.empty() && shape_mismatches.empty() &&
           (!index_total_size || *index_total_size == expected_total_size);
  }
};

// `have_headers`: the tensors' shapes and dtypes are real (else names only). `total_size`: the
// checkpoint's bytes as it states them. Throws the model's quantization_config error.
CheckpointValidation validate_checkpoint(const Model& model, const std::vector<CheckpointTensor>& tensors,
                                         bool have_headers, std::optional<std::uint64_t> total_size);

}  // namespace memfit
