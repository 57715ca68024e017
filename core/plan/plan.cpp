#include "memfit/plan/plan.h"

#include <algorithm>

#include <fmt/format.h>

#include "memfit/format/strict_json.h"
#include "memfit/memory/will_it_run.h"
#include "memfit/model/model.h"
#include "memfit/plan/infer_device_map.h"
#include "memfit/report/convert_bytes.h"
#include "runtime_parts.h"

namespace memfit::plan {
namespace {

void check_budgets(const PlanRequest& req) {
  if (req.max_memory.empty())
    throw Error(ErrorCode::kInvalidArgument, "max_memory: no budgets given (e.g. 0=24GiB,cpu=64GiB)");
  bool any = false;
  for (const auto& [d, b] : req.max_memory) any = any || (b > 0 && d != Device::disk());
  if (!any && req.no_disk)
    throw Error(ErrorCode::kInvalidArgument,
                "max_memory: every budget is 0 and disk is not allowed: nothing can hold the model");
}

}  // namespace

AccelerateOptions accelerate_options(const PlanRequest& req, bool compat) {
  AccelerateOptions o;
  o.no_split = req.no_split;
  o.dtype = req.dtype;
  o.special_dtypes = req.special_dtypes;
  o.offload_buffers = req.offload_buffers;
  o.include_legacy_buffers = compat;
  return o;
}

Result<PlanResult> run_plan(const PlanRequest& req) {
  Result<Model> model = build_model(req.model);
  if (!model) return model.error();
  return run_plan(*model, req);
}

Result<PlanResult> run_plan(const Model& model, const PlanRequest& req) {
  return capture([&]() -> PlanResult {
    check_budgets(req);
    const bool compat = model.request.mode == Mode::kAccelerate;
    const TensorTree tree = for_era(model.tree, compat);
    PlanRequest filled = req;
    std::vector<std::string> notes;
    if (req.strategy == Strategy::kFit && req.kv_bytes.empty() && req.activation_bytes == 0 && model.has_config)
      runtime_parts(model, req, tree, &filled.kv_bytes, &filled.activation_bytes, &notes);
    Result<PlanResult> r = plan_tree(tree, filled, compat);
    if (!r) throw r.error();
    PlanResult out = std::move(r).value();
    out.explain.insert(out.explain.begin(), notes.begin(), notes.end());
    return out;
  });
}

Result<PlanResult> plan_tree(const TensorTree& tree, const PlanRequest& req, bool compat) {
  return capture([&]() -> PlanResult {
    check_budgets(req);
    PlanResult out;
    out.strategy = req.strategy;
    out.model_class = tree.class_name();
    const AccelerateOptions opt = accelerate_options(req, compat);
    if (req.strategy == Strategy::kFit) {
      FitOptions fo;
      fo.sizes = opt;
      fo.overhead_bytes = req.overhead_bytes;
      fo.activation_bytes = req.activation_bytes;
      fo.kv_bytes = req.kv_bytes;
      fo.allow_disk = !req.no_disk;
      auto fit = plan_fit(tree, req.max_memory, fo);
      if (!fit) throw fit.error();
      out.device_map = fit->device_map;
      out.max_memory = req.max_memory;
      out.streamed_bytes = static_cast<double>(fit->streamed_bytes);
      out.explain = fit->explain;
      for (const auto& d : fit->devices)
        out.bytes_per_device.emplace_back(d.device.key(), static_cast<double>(d.total()));
      out.fit = std::move(fit).value();
      return out;
    }
    auto acc = plan_accelerate(tree, req.max_memory, req.strategy, opt);
    if (!acc) throw acc.error();
    out.device_map = acc->device_map;
    out.max_memory = acc->max_memory;
    const ModuleSizes sizes = planner_sizes(tree, opt);
    std::vector<std::pair<std::string, double>> per;
    for (const auto& [d, b] : out.max_memory) per.emplace_back(d.key(), 0.0);
    if (std::none_of(per.begin(), per.end(), [](const auto& p) { return p.first == "disk"; }))
      per.emplace_back("disk", 0.0);
    for (const auto& [key, dev] : out.device_map) {
      const double bytes = bits_to_bytes(sizes.at(tree, key));
      for (auto& [k, v] : per)
        if (k == dev.key()) v += bytes;
      if (!dev.is_gpu()) out.streamed_bytes += bytes;
    }
    for (const auto& [k, v] : per)
      if (v > 0 || k != "disk") out.bytes_per_device.emplace_back(k, v);
    if (req.no_disk)
      for (const auto& [key, dev] : out.device_map)
        if (dev == Device::disk())
          throw Error(ErrorCode::kInvalidValue,
                      fmt::format("the model does not fit without disk: '{}' would go to disk "
                                  "(raise the budgets or allow disk)", key.empty() ? "the whole model" : key));
    for (const auto& [k, v] : out.bytes_per_device) {
      std::string budget = "unlimited";
      for (const auto& [d, b] : out.max_memory)
        if (d.key() == k) budget = convert_bytes(static_cast<double>(b));
      out.explain.push_back(fmt::format("{}: {} (budget {})", k, convert_bytes(v), budget));
    }
    out.explain.push_back(fmt::format("streamed per forward pass: {}", convert_bytes(out.streamed_bytes)));
    return out;
  });
}

nlohmann::ordered_json device_map_to_json(const DeviceMap& map) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [k, d] : map) {
    if (d.is_gpu()) j[k] = d.index;
    else j[k] = d.key();
  }
  return j;
}

Result<DeviceMap> device_map_from_json(const std::string& text, const std::string& source) {
  return capture([&]() -> DeviceMap {
    Json j;
    if (auto err = parse_strict_json(text, 8, &j))
      throw Error(ErrorCode::kInvalidJson, fmt::format("{}: {}", source, err->detail));
    if (!j.is_object())
      throw Error(ErrorCode::kInvalidJson, fmt::format("{}: a device map is a JSON object", source));
    DeviceMap map;
    for (const auto& [k, v] : j.items()) {
      std::string key;
      if (v.is_number_integer() && v.get<std::int64_t>() >= 0) key = std::to_string(v.get<std::int64_t>());
      else if (v.is_string()) key = v.get<std::string>();
      else
        throw Error(ErrorCode::kInvalidArgument,
                    fmt::format("{}: '{}' maps to {}, not a device", source, k, v.dump()));
      auto d = parse_device(key);
      if (!d) throw Error(ErrorCode::kInvalidArgument, fmt::format("{}: '{}': {}", source, k, d.error().message()));
      map.emplace_back(k, *d);
    }
    return map;
  });
}

nlohmann::ordered_json plan_to_json(const PlanResult& r) {
  nlohmann::ordered_json j;
  j["strategy"] = std::string(strategy_name(r.strategy));
  j["model_class"] = r.model_class;
  j["device_map"] = device_map_to_json(r.device_map);
  nlohmann::ordered_json per = nlohmann::ordered_json::object();
  for (const auto& [k, v] : r.bytes_per_device) per[k] = v;
  j["bytes_per_device"] = per;
  nlohmann::ordered_json mm = nlohmann::ordered_json::object();
  for (const auto& [d, b] : r.max_memory) mm[d.key()] = b;
  j["max_memory"] = mm;
  j["streamed_bytes"] = r.streamed_bytes;
  j["explain"] = r.explain;
  if (r.fit) {
    nlohmann::ordered_json devs = nlohmann::ordered_json::array();
    for (const auto& d : r.fit->devices)
      devs.push_back({{"device", d.device.key()}, {"budget", d.budget}, {"weights", d.weights},
                      {"kv_cache", d.kv_cache}, {"activations", d.activations},
                      {"overhead", d.overhead}, {"reserve", d.reserve}, {"total", d.total()},
                      {"units", d.units.size()}});
    j["devices"] = devs;
  }
  return j;
}

}  // namespace memfit::plan
