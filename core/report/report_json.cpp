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

nlohmann::ordered_json comparison_to_json(const TreeComparison& c) {
  nlohmann::ordered_json j;
  j["matches"] = c.matches();
  j["missing"] = c.missing;
  j["unexpected"] = c.unexpected;
  j["shape_mismatches"] = nlohmann::ordered_json::array();
  for (const auto& m : c.shape_mismatches)
    j["shape_mismatches"].push_back({{"name", m.name}, {"expected", m.expected}, {"got", m.got}});
  j["dtype_differences"] = nlohmann::ordered_json::array();
  for (const auto& d : c.dtype_differences)
    j["dtype_differences"].push_back({{"name", d.name},
                                      {"expected", std::string(safetensors_name(d.expected))},
                                      {"got", std::string(safetensors_name(d.got))}});
  if (!c.prefix_note.empty()) j["prefix_note"] = c.prefix_note;
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
  out["notes"] = r.notes;
  if (r.comparison) out["comparison"] = comparison_to_json(*r.comparison);
  return out;
}

nlohmann::json error_to_json(const Error& e) {
  return {{"code", std::string(error_code_name(e.code()))}, {"message", e.message()}};
}

}  // namespace memfit
