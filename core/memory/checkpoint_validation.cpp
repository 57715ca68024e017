#include "memfit/memory/checkpoint_validation.h"

#include <map>

#include <fmt/format.h>

#include "memfit/memory/quantization.h"
#include "memfit/memory/stored_form.h"

namespace memfit {
namespace {

// The bytes of a checkpoint tensor transformers ignores: the header's, else the tree's (the
// 4.40-era per-layer rotary inv_freq), else the multi-token-prediction layers' stored form.
class IgnoredBytes {
 public:
  IgnoredBytes(const Model& model, const std::vector<CheckpointTensor>& tensors, bool have_headers)
      : model_(model) {
    if (have_headers)
      for (const auto& t : tensors) headers_[t.name] = stored_bytes(t.shape, t.dtype);
  }
  std::optional<std::uint64_t> of(const std::string& name) {
    if (auto it = headers_.find(name); it != headers_.end()) return it->second;
    if (const int i = model_.tree.find_tensor(name); i >= 0)
      return stored_bytes(model_.tree.tensors[static_cast<std::size_t>(i)].shape,
                          model_.tree.tensors[static_cast<std::size_t>(i)].dtype);
    if (!mtp_read_) {
      for (const auto& t : mtp_stored_form(model_)) mtp_[t.name] = t.bytes;
      mtp_read_ = true;
    }
    if (auto it = mtp_.find(name); it != mtp_.end()) return it->second;
    return std::nullopt;
  }

 private:
  const Model& model_;
  std::map<std::string, std::uint64_t> headers_, mtp_;
  bool mtp_read_ = false;
};

}  // namespace

CheckpointValidation validate_checkpoint(const Model& model, const std::vector<CheckpointTensor>& tensors,
                                         bool have_headers, std::optional<std::uint64_t> total_size) {
  const ModelStoredForm form = stored_form(model);
  std::vector<ExpectedTensor> expected;
  expected.reserve(form.tensors.size());
  for (const auto& t : form.tensors) expected.push_back({t.name, t.shape, t.dtype});
  std::vector<std::string> aliases;
  for (const auto& t : model.tree.tensors)
    if (t.is_alias()) aliases.push_back(t.name);
  const TreeComparison c = compare_state_dict(expected, aliases, tensors, std::nullopt, have_headers);

  CheckpointValidation v;
  v.missing = c.missing;
  v.shape_mismatches = c.shape_mismatches;
  v.dtype_differences = c.dtype_differences;
  v.prefix_note = c.prefix_note;
  v.dtype = fmt::format("{} ({})", torch_name(form.dtype), form.dtype_source);
  v.expected_total_size = form.total_bytes;
  v.index_total_size = total_size;

  const IgnoredOnLoad ignore(model.config);
  IgnoredBytes sizes(model, tensors, have_headers);
  std::vector<std::string> unsized;
  for (const auto& name : c.unexpected) {
    if (!ignore.matches(name)) {
      v.unexpected.push_back(name);
      continue;
    }
    v.ignored.push_back(name);
    // Their bytes are in the checkpoint's total all the same.
    if (auto b = sizes.of(name)) v.expected_total_size += *b;
    else unsized.push_back(name);
  }
  if (!unsized.empty())
    v.notes.push_back(fmt::format("{} ignored tensors (e.g. {}) have no size the config implies; "
                                  "expected_total_size leaves them out", unsized.size(), unsized.front()));
  return v;
}

}  // namespace memfit
