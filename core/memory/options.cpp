#include "memfit/memory/options.h"

namespace memfit {

WeightDtype parse_weight_dtype(std::string_view name, std::string_view option) {
  WeightDtype w;
  if ((w.quant = value_of(kWeightQuantNames, name))) return w;
  w.floating = dtype_from_name(name);
  if (!w.floating || !is_floating(*w.floating)) throw unknown_value_error(option, name, weight_dtype_list());
  return w;
}

std::string weight_dtype_list() {
  return name_list(kWeightFloatNames) + ", " + name_list(kWeightQuantNames);
}

}  // namespace memfit
