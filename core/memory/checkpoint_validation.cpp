#include "memfit/memory/checkpoint_validation.h"

#include <map>

#include <fmt/format.h>

#include "memfit/memory/quantization.h"
#include "memfit/memory/stored_form.h"

namespace memfit {

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

  std::map<std::string, const CheckpointTensor*> by_name;
  for (const auto& t : tensors) by_name[t.name] = &t;
  const IgnoredOnLoad ignore(model.config);
  std::size_t unsized = 0;
  for (const auto& name : c.unexpected) {
    if (!ignore.matches(name)) {
      v.unexpected.push_back(name);
      continue;
    }
    v.ignored.push_back(name);
    // Their bytes are in the checkpoint's total all the same.
    if (have_headers) {
      const CheckpointTensor& t = *by_name.at(name);
      v.expected_total_size += stored_bytes(t.shape, t.dtype);
    } else if (const int i = model.tree.find_tensor(name); i >= 0) {
      const TensorInfo& t = model.tree.tensors[static_cast<std::size_t>(i)];
      v.expected_total_size += stored_bytes(t.shape, t.dtype);
    } else {
      ++unsized;
    }
  }
  if (unsized > 0)
    v.notes.push_back(fmt::format("{} ignored tensors (e.g. {}) have no size the config implies; "
                                  "expected_total_size leaves them out", unsized, v.ignored.front()));
  return v;
}

}  // namespace memfit
