#include "memfit/report/report_json.h"

#include <cmath>

namespace memfit {
namespace {

// Whole byte counts print as integers; accelerate's 1/8-byte bools can make them fractional.
nlohmann::ordered_json number(double v) {
  if (std::floor(v) == v && std::fabs(v) < 9.0e15) return static_cast<std::int64_t>(v);
  return v;
}

}  // namespace

namespace {

nlohmann::ordered_json shape_mismatches_json(const std::vector<ShapeMismatch>& list) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& m : list) out.push_back({{"name", m.name}, {"expected", m.expected}, {"got", m.got}});
  return out;
}

nlohmann::ordered_json dtype_differences_json(const std::vector<DtypeDifference>& list) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& d : list)
    out.push_back({{"name", d.name},
                   {"expected", std::string(safetensors_name(d.expected))},
                   {"got", std::string(safetensors_name(d.got))}});
  return out;
}

}  // namespace

nlohmann::ordered_json comparison_to_json(const TreeComparison& c) {
  nlohmann::ordered_json j;
  j["matches"] = c.matches();
  j["missing"] = c.missing;
  j["unexpected"] = c.unexpected;
  j["shape_mismatches"] = shape_mismatches_json(c.shape_mismatches);
  j["dtype_differences"] = dtype_differences_json(c.dtype_differences);
  if (!c.prefix_note.empty()) j["prefix_note"] = c.prefix_note;
  return j;
}

nlohmann::ordered_json validation_to_json(const CheckpointValidation& v) {
  nlohmann::ordered_json j;
  j["ok"] = v.ok();
  j["missing"] = v.missing;
  j["unexpected"] = v.unexpected;
  j["ignored"] = v.ignored;
  j["shape_mismatches"] = shape_mismatches_json(v.shape_mismatches);
  j["expected_total_size"] = v.expected_total_size;
  j["index_total_size"] = v.index_total_size ? nlohmann::ordered_json(*v.index_total_size) : nullptr;
  j["dtype_differences"] = dtype_differences_json(v.dtype_differences);
  j["dtype"] = v.dtype;
  if (!v.prefix_note.empty()) j["prefix_note"] = v.prefix_note;
  j["notes"] = v.notes;
  return j;
}

nlohmann::ordered_json report_to_json(const Report& r) {
  nlohmann::ordered_json out;
  out["name"] = r.name;
  out["library"] = r.library;
  out["model_type"] = r.model_type;
  out["model_class"] = r.model_class;
  out["mode"] = mode_name(r.mode);
  out["source"] = r.source;
  if (r.source == "checkpoint") {
    out["stored_bytes"] = number(r.stored_bytes);
    out["checkpoint_format"] = r.checkpoint_format;
  }
  out["parameters"] = r.parameters;
  out["buffers_bytes"] = number(r.buffers_bytes);
  out["rows"] = nlohmann::ordered_json::array();
  for (const auto& row : r.rows) {
    nlohmann::ordered_json j;
    j["dtype"] = row.dtype;
    j["largest_layer_bytes"] = number(row.largest_layer_bytes);
    j["total_bytes"] = number(row.total_bytes);
    j["training_bytes"] = row.training_bytes ? number(*row.training_bytes) : nullptr;
    j["largest_layer"] = row.largest_layer;
    j["total"] = row.total;
    j["training"] = row.training;
    if (!row.training_parts.empty()) {
      nlohmann::ordered_json parts;
      for (const auto& p : row.training_parts) parts[p.name] = number(p.bytes);
      j["training_parts"] = parts;
    }
    out["rows"].push_back(std::move(j));
  }
  out["largest_layer_names"] = r.largest_layer_names;
  // Module names are unique (first-seen order): append them without ordered_map's linear
  // lookup per key, which made this quadratic (~1,000 modules for a 70B model).
  nlohmann::ordered_json sizes = nlohmann::ordered_json::object();
  auto& entries = sizes.get_ref<nlohmann::ordered_json::object_t&>();
  entries.reserve(r.module_sizes.size());
  for (const auto& [k, v] : r.module_sizes) entries.Container::emplace_back(k, number(v));
  out["module_sizes"] = std::move(sizes);
  nlohmann::ordered_json repeats = nlohmann::ordered_json::object();
  for (const auto& [k, n] : r.module_repeats) repeats[k] = n;
  out["module_repeats"] = std::move(repeats);
  out["notes"] = r.notes;
  if (r.comparison) out["comparison"] = comparison_to_json(*r.comparison);
  out["figures"] = nlohmann::ordered_json::array();
  for (const auto& f : r.figures)
    out["figures"].push_back({{"figure", f.figure}, {"exact", f.exact}, {"basis", f.basis}});
  return out;
}

nlohmann::json error_to_json(const Error& e) {
  return {{"code", std::string(error_code_name(e.code()))}, {"message", e.message()}};
}

}  // namespace memfit
