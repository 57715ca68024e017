#include "load_plan.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "failure.h"
#include "file_reader.h"
#include "memfit/memory/estimate.h"
#include "memfit/plan/plan.h"
#include "open_checkpoint.h"

namespace memfit::torchrt {
namespace fs = std::filesystem;

namespace {

std::string config_path(const LoadRequest& req) {
  std::error_code ec;
  std::string p = req.config.empty() ? req.checkpoint : req.config;
  if (!fs::is_directory(p, ec) && fs::path(p).filename() != "config.json")
    p = fs::path(p).parent_path().string();  // a checkpoint file: its folder's config.json
  if (fs::is_directory(p.empty() ? "." : p, ec)) p = (fs::path(p.empty() ? "." : p) / "config.json").string();
  return p;
}

// Fails (or warns) on missing / unexpected / shape mismatches, each listed by name.
void check_comparison(const TreeComparison& c, const LoadRequest& req, const std::string& where) {
  std::vector<std::string> problems;
  for (const auto& m : c.shape_mismatches)
    problems.push_back(fmt::format("tensor '{}' has shape [{}] in the checkpoint; the config implies [{}]",
                                   m.name, fmt::join(m.got, ", "), fmt::join(m.expected, ", ")));
  if (!req.allow_missing)
    for (const auto& n : c.missing) problems.push_back(fmt::format("missing: '{}'", n));
  if (!req.ignore_unexpected)
    for (const auto& n : c.unexpected) problems.push_back(fmt::format("unexpected: '{}'", n));
  if (problems.empty()) return;
  const std::size_t shown = std::min<std::size_t>(problems.size(), 8);
  std::string msg = fmt::format("{}: the checkpoint does not match the model ({} problem{}; nothing "
                                "was loaded):", where, problems.size(), problems.size() == 1 ? "" : "s");
  for (std::size_t i = 0; i < shown; ++i) msg += "\n  " + problems[i];
  if (shown < problems.size()) msg += fmt::format("\n  … and {} more", problems.size() - shown);
  if (!c.missing.empty() && !req.allow_missing) msg += "\n  (--allow-missing loads anyway)";
  if (!c.unexpected.empty() && !req.ignore_unexpected) msg += "\n  (--ignore-unexpected skips them)";
  throw Failure{FailureKind::kMismatch, msg};
}

bool is_strategy(const std::string& s) {
  return plan::strategy_from_name(s).has_value();
}

// max_memory from the flag, or from what is free (accelerate's get_max_memory).
plan::MaxMemory budgets(const LoadRequest& req, const DeviceInventory& inv) {
  if (!req.max_memory.empty()) return value_or_raise(plan::parse_max_memory(req.max_memory));
  std::vector<std::pair<plan::Device, std::uint64_t>> entries;
  for (std::size_t i = 0; i < inv.gpu_free_bytes.size(); ++i)
    entries.emplace_back(plan::Device::gpu(static_cast<int>(i)), inv.gpu_free_bytes[i]);
  entries.emplace_back(plan::Device::cpu(), inv.cpu_available_bytes);
  return value_or_raise(plan::normalize_max_memory(std::move(entries)));
}

plan::DeviceMap resolve_map(const LoadRequest& req, const LoadPlan& lp, const DeviceInventory& inv,
                            std::string* origin) {
  // accelerate: max_memory only means something with a device map; given alone, it implies auto.
  const std::string spec = req.device_map.empty() && !req.max_memory.empty() ? "auto" : req.device_map;
  if (spec.empty()) {
    *origin = "default";
    return {{"", inv.gpu_free_bytes.empty() ? plan::Device::cpu() : plan::Device::gpu(0)}};
  }
  if (is_strategy(spec)) {
    *origin = spec;
    plan::PlanRequest pr;
    pr.max_memory = budgets(req, inv);
    pr.strategy = *plan::strategy_from_name(spec);
    pr.dtype = lp.dtype;
    return value_or_raise(plan::run_plan(lp.model, pr)).device_map;
  }
  std::string text = spec;
  std::string source = "--device-map (inline JSON)";
  *origin = "inline";
  if (spec.front() != '{') {
    text = io::read_file(spec);
    source = spec;
    *origin = "file " + spec;
  }
  return value_or_raise(plan::device_map_from_json(text, source));
}

void check_devices_exist(const plan::DeviceMap& map, const DeviceInventory& inv) {
  for (const auto& [key, dev] : map) {
    if (dev.kind == plan::Device::Kind::kMps)
      throw Failure{FailureKind::kUsage, fmt::format("device map: '{}' → mps: memfit-torch runs on CUDA, CPU and disk", key)};
    if (dev.is_gpu() && static_cast<std::size_t>(dev.index) >= inv.gpu_free_bytes.size())
      throw Failure{FailureKind::kUsage,
                     fmt::format("device map: '{}' → GPU {}, but {} CUDA device{} available{}",
                                 key.empty() ? "the whole model" : key, dev.index,
                                 inv.gpu_free_bytes.size(), inv.gpu_free_bytes.size() == 1 ? " is" : "s are",
                                 inv.gpu_free_bytes.empty() ? " (this LibTorch has no CUDA, or no GPU)" : "")};
  }
}

// Non-persistent buffers (a rotary inv_freq) are computed by the model code, never loaded, so a
// map need not place them (accelerate's check_device_map looks at the state dict only): the map
// is checked as if each uncovered one had its own key.
plan::DeviceMap with_computed_buffers(const TensorTree& tree, plan::DeviceMap map) {
  for (const auto& t : tree.tensors)
    if (t.kind == TensorKind::kBuffer && !t.persistent && !plan::device_of(map, t.name))
      map.emplace_back(t.name, plan::Device::cpu());
  return map;
}

}  // namespace

bool LoadPlan::any_gpu() const {
  return std::any_of(weights.begin(), weights.end(), [](const auto& w) { return w.device.is_gpu(); });
}

std::string resolve_alias(const TensorTree& tree, const std::string& name) {
  const int i = tree.find_tensor(name);
  if (i < 0) return name;
  const TensorInfo& t = tree.tensors[static_cast<std::size_t>(i)];
  return t.is_alias() ? tree.tensors[static_cast<std::size_t>(t.tied_to)].name : name;
}

std::vector<std::string> tensors_under(const TensorTree& tree, const std::string& module) {
  std::vector<std::string> out;
  const std::string prefix = module.empty() ? "" : module + ".";
  for (const auto& t : tree.tensors) {
    if (t.name.compare(0, prefix.size(), prefix) != 0) continue;
    if (t.kind == TensorKind::kBuffer && !t.persistent) continue;
    std::string name = t.is_alias() ? tree.tensors[static_cast<std::size_t>(t.tied_to)].name : t.name;
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  }
  return out;
}

namespace {

// The dtype weights keep in memory when --dtype names none: the checkpoint's own — the floating
// dtype holding most of its bytes — so a bf16 7B stays 14 GB instead of transformers 4.x's
// float32 default doubling it (transformers 5 and `torch_dtype="auto"` keep it too). Computing
// upcasts per block where the device needs it (Executor: float32 on a CPU).
DType stored_dtype(const checkpoint::Checkpoint& source) {
  std::vector<std::pair<DType, std::uint64_t>> bytes;
  for (const auto& t : source.tensors) {
    if (!is_floating(t.dtype) || t.dtype == DType::kF64) continue;
    auto it = std::find_if(bytes.begin(), bytes.end(), [&](const auto& b) { return b.first == t.dtype; });
    if (it == bytes.end()) bytes.emplace_back(t.dtype, t.nbytes);
    else it->second += t.nbytes;
  }
  if (bytes.empty()) return DType::kF32;
  return std::max_element(bytes.begin(), bytes.end(), [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

// A parameter stored in a dtype the runtime cannot compute with (int8/fp8/packed 4-bit weights
// of a quantized checkpoint) is refused before anything is mapped, naming the first such tensor.
void check_computable(const LoadPlan& lp) {
  for (const PlacedWeight& w : lp.weights) {
    const checkpoint::TensorRecord& r = lp.source.tensors[w.record];
    const int t = lp.tree.find_tensor(w.model_name);
    const bool parameter = t >= 0 && lp.tree.tensors[static_cast<std::size_t>(t)].kind == TensorKind::kParameter;
    const bool computable = r.dtype == DType::kF16 || r.dtype == DType::kBF16 || r.dtype == DType::kF32 ||
                            r.dtype == DType::kF64;
    if (parameter && !computable)
      throw Failure{FailureKind::kUnsupported,
                    fmt::format("{}: tensor '{}' is stored as {}; memfit-torch computes with F32, F16, BF16 or F64 "
                                "weights (a quantized checkpoint needs its dequantization, which is not implemented)",
                                lp.source.path, r.name, safetensors_name(r.dtype))};
  }
}

}  // namespace

LoadPlan make_load_plan(const LoadRequest& req, const DeviceInventory& inv) {
  LoadPlan lp;
  const std::string cfg_path = config_path(req);
  const std::string config_text = io::read_file(cfg_path);
  if (req.dtype && !is_floating(*req.dtype))
    throw Failure{FailureKind::kUsage, fmt::format("--dtype {}: weights can be loaded in a floating dtype only",
                                                torch_name(*req.dtype))};

  EstimateRequest er;
  er.config_text = config_text;
  er.name = cfg_path;
  er.mode = Mode::kMemfit;  // architectures[0], the class that is loaded (with its head)
  lp.model = value_or_raise(build_model(std::move(er)));
  lp.model_type = lp.model.model_type;
  lp.tree = for_era(lp.model.tree, /*legacy=*/false);

  lp.source = checkpoint::open_checkpoint(req.checkpoint);  // headers only: shards checked, nothing mapped
  lp.dtype = req.dtype ? *req.dtype : stored_dtype(lp.source);
  lp.comparison = compare_trees(lp.tree, lp.source.tree_tensors(), std::nullopt);
  check_comparison(lp.comparison, req, req.checkpoint);

  if (req.stage) lp.stage = req.stage(lp);
  if (lp.stage && lp.stage->device_map) {
    lp.device_map = *lp.stage->device_map;
    lp.device_map_origin = lp.stage->device_map_origin;
  } else {
    lp.device_map = resolve_map(req, lp, inv, &lp.device_map_origin);
  }
  // A stage's map covers its own tensors (checked one by one below), not the whole model.
  if (!lp.stage) value_or_raise(plan::check_device_map(lp.tree, with_computed_buffers(lp.tree, lp.device_map)));
  check_devices_exist(lp.device_map, inv);

  // Checkpoint names → model names; tied copies (a .bin's lm_head.weight) and unexpected
  // tensors are not loaded.
  for (std::size_t i = 0; i < lp.source.tensors.size(); ++i) {
    const std::string& stored = lp.source.tensors[i].name;
    std::string name = stored;
    const std::string& strip = lp.comparison.strip_prefix;
    if (!strip.empty() && name.compare(0, strip.size(), strip) == 0) name = name.substr(strip.size());
    name = lp.comparison.add_prefix + name;
    const int t = lp.tree.find_tensor(name);
    if (t < 0 || lp.tree.tensors[static_cast<std::size_t>(t)].is_alias()) {
      lp.skipped.push_back(stored);
      continue;
    }
    if (lp.stage && std::find(lp.stage->tensors.begin(), lp.stage->tensors.end(), name) == lp.stage->tensors.end())
      continue;  // another stage's
    const plan::Device* d = plan::device_of(lp.device_map, name);
    if (!d) throw Failure{FailureKind::kUsage, fmt::format("device map: no key covers '{}'", name)};
    lp.weights.push_back({i, name, *d});
  }
  check_computable(lp);
  return lp;
}

}  // namespace memfit::torchrt
