#include "memfit/plan/pipeline.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "memfit/memory/module_sizes.h"
#include "memfit/plan/fit.h"
#include "memfit/report/convert_bytes.h"
#include "pipeline_split.h"
#include "runtime_parts.h"

namespace memfit::plan {
namespace {

struct Unit {
  TreeItem item;
  std::string name;
  double weights = 0, kv = 0;
};

// The units of the whole model with the bytes the split balances.
std::vector<Unit> sized_units(const TensorTree& tree, const PlanRequest& req, bool compat,
                              const std::map<std::string, std::uint64_t>& kv) {
  const std::vector<std::string> no_split = req.no_split ? *req.no_split : tree.no_split_classes;
  const ModuleSizes sizes = planner_sizes(tree, accelerate_options(req, compat));
  std::vector<Unit> units;
  for (const TreeItem& it : placement_units(tree, no_split)) {
    Unit u{it, it.name(tree), bits_to_bytes(sizes.at(it)), 0};
    if (auto k = kv.find(u.name); k != kv.end()) u.kv = static_cast<double>(k->second);
    units.push_back(std::move(u));
  }
  return units;
}

void mark_ancestors(const TensorTree& tree, int module, std::vector<char>* keep_module) {
  for (int m = module; m >= 0 && !(*keep_module)[m]; m = tree.modules[m].parent) (*keep_module)[m] = 1;
}

void mark_subtree(const TensorTree& tree, int module, std::vector<char>* keep_module,
                  std::vector<char>* keep_tensor) {
  (*keep_module)[module] = 1;
  const ModuleNode& m = tree.modules[module];
  for (const int t : m.params) (*keep_tensor)[t] = 1;
  for (const int t : m.buffers) (*keep_tensor)[t] = 1;
  for (const int c : m.children) mark_subtree(tree, c, keep_module, keep_tensor);
}

// The model narrowed to one stage's units, named as in the whole model: its own device map's keys
// are the whole model's names. A weight tied to one in another stage becomes the stage's own copy.
TensorTree stage_tree(const TensorTree& tree, const std::vector<Unit>& units, std::size_t first, std::size_t end) {
  std::vector<char> keep_module(tree.modules.size(), 0), keep_tensor(tree.tensors.size(), 0);
  for (std::size_t u = first; u < end; ++u) {
    const TreeItem& it = units[u].item;
    if (it.is_tensor) {
      keep_tensor[it.index] = 1;
      mark_ancestors(tree, tree.tensors[it.index].module, &keep_module);
    } else {
      mark_subtree(tree, it.index, &keep_module, &keep_tensor);
      mark_ancestors(tree, tree.modules[it.index].parent, &keep_module);
    }
  }
  keep_module[0] = 1;
  return keep_marked(tree, keep_module, keep_tensor);
}

// A stage's planner merges keys as if its units were the whole model ("" or "model" for one
// device); in the whole model such a key would claim the other stages' units too. Each key that
// covers a unit of another stage is replaced by this stage's units under it.
DeviceMap confine_to_stage(const DeviceMap& map, const std::vector<Unit>& units, std::size_t first, std::size_t end) {
  DeviceMap out;
  for (const auto& [key, device] : map) {
    bool foreign = false;
    for (std::size_t u = 0; u < units.size() && !foreign; ++u)
      foreign = (u < first || u >= end) && covers(key, units[u].name);
    if (!foreign) {
      out.emplace_back(key, device);
      continue;
    }
    for (std::size_t u = first; u < end; ++u)
      if (covers(key, units[u].name)) out.emplace_back(units[u].name, device);
  }
  return out;
}

// Weights by where the stage's own plan puts them.
struct StageBytes {
  double gpu = 0, cpu = 0, disk = 0;
  double routed = 0;  // of which routed experts (under ".experts."), wherever they are
};

StageBytes placed_bytes(const TensorTree& sub, const PlanResult& plan, const AccelerateOptions& opt) {
  const ModuleSizes sizes = planner_sizes(sub, opt);
  StageBytes b;
  for (std::size_t t = 0; t < sub.tensors.size(); ++t) {
    const Device* d = device_of(plan.device_map, sub.tensors[t].name);
    const double bytes = bits_to_bytes(sizes.tensor_bits[t]);
    if (sub.tensors[t].name.find(".experts.") != std::string::npos) b.routed += bytes;
    if (!d || d->kind == Device::Kind::kCpu) b.cpu += bytes;
    else if (d->kind == Device::Kind::kDisk) b.disk += bytes;
    else b.gpu += bytes;
  }
  return b;
}

// The share of each MoE layer's routed experts `tokens` tokens go through (1 without dims).
double touched(const Model& model, std::int64_t tokens) {
  try {
    if (const ModelDims* d = model.dims.get()) return experts_touched(*d, tokens);
  } catch (const Error&) {
  }
  return 1;
}

double node_speed(const NodeSpec& node, const StageSpeeds& sp) {
  if (node.gpu_count() == 0) return sp.cpu_bytes_per_s;
  return node.gpu ? node.gpu->bandwidth_bytes_s : sp.gpu_bytes_per_s;
}

// One decode step of a stage, memory-bound: every weight it holds and its KV cache read once, of
// an MoE's routed experts only the `touched` share the step's tokens go through. On a node with
// GPUs everything is computed there, while CPU- and disk-held weights stream in whole (memfit
// prefetches them during compute, so the slower of the two bounds the step); without GPUs the CPU
// reads its weights and the disk ones in turn.
double step_seconds(const StageBytes& b, double kv, double touched, const NodeSpec& node, const StageSpeeds& sp) {
  const double skipped = b.routed * (1 - touched);
  if (node.gpu_count() == 0)
    return std::max(0.0, b.cpu + b.gpu - skipped + kv) / sp.cpu_bytes_per_s + b.disk / sp.disk_bytes_per_s;
  const double compute = (b.gpu + b.cpu + b.disk - skipped + kv) / node_speed(node, sp);
  const double stream = b.cpu / sp.pcie_bytes_per_s + b.disk / sp.disk_bytes_per_s;
  return std::max(compute, stream);
}

// What each node's share is balanced against: its budgets (less what a `fit` plan sets aside per
// GPU before weights), or its speed.
std::vector<double> split_weights(const PipelineRequest& req, Balance balance, std::uint64_t activations) {
  std::vector<double> w;
  for (const NodeSpec& n : req.nodes) {
    if (n.capacity() == 0)
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("--nodes: node '{}' budgets nothing but disk: a stage needs memory", n.name));
    if (balance == Balance::kCompute) {
      w.push_back(node_speed(n, req.speeds));
      continue;
    }
    double room = static_cast<double>(n.capacity());
    if (req.plan.strategy == Strategy::kFit)
      room -= n.gpu_count() * static_cast<double>(req.plan.overhead_bytes + activations);
    w.push_back(std::max(room, 1.0));
  }
  return w;
}

std::vector<std::size_t> split_units(const PipelineRequest& req, const std::vector<Unit>& units,
                                     std::uint64_t activations, std::vector<std::string>* explain) {
  if (units.size() < req.nodes.size())
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("--nodes: {} nodes, but the model has only {} placement units to split", req.nodes.size(),
                            units.size()));
  std::vector<double> loads;
  for (const Unit& u : units) loads.push_back(u.weights + u.kv);
  const std::vector<double> weights = split_weights(req, req.balance, activations);
  std::vector<std::optional<double>> limits(req.nodes.size());
  if (req.balance == Balance::kCompute) {
    for (std::size_t i = 0; i < req.nodes.size(); ++i)
      limits[i] = static_cast<double>(req.nodes[i].capacity());
    if (auto s = split_contiguous(loads, weights, limits)) {
      explain->push_back("stages balanced by speed: each node's share in proportion to its memory bandwidth, "
                         "within its budgets");
      return *s;
    }
    explain->push_back("stages balanced by memory: no split by speed keeps every share within its node's budgets");
    limits.assign(req.nodes.size(), std::nullopt);
    return *split_contiguous(loads, split_weights(req, Balance::kMemory, activations), limits);
  }
  explain->push_back("stages balanced by memory: each node's weights + KV cache in proportion to its budgets");
  return *split_contiguous(loads, weights, limits);
}

// A tied weight whose stages differ is held by both: say so (the split sized it once).
void note_split_ties(const TensorTree& tree, const std::vector<TensorTree>& stages, std::vector<std::string>* explain) {
  std::vector<int> stage_of_tensor(tree.tensors.size(), -1);
  for (std::size_t s = 0; s < stages.size(); ++s) {
    for (const TensorInfo& t : stages[s].tensors) {
      const int i = tree.find_tensor(t.name);
      if (i >= 0) stage_of_tensor[i] = static_cast<int>(s);
    }
  }
  for (std::size_t i = 0; i < tree.tensors.size(); ++i) {
    const TensorInfo& t = tree.tensors[i];
    if (t.tied_to >= 0 && stage_of_tensor[i] >= 0 && stage_of_tensor[t.tied_to] >= 0 &&
        stage_of_tensor[i] != stage_of_tensor[t.tied_to])
      explain->push_back(fmt::format("{} is tied to {}: both stages hold a copy", t.name,
                                     tree.tensors[t.tied_to].name));
  }
}

struct Activation {
  std::int64_t hidden = 0;
  std::string dtype;
  double element_bytes = 0;
};

Activation activation_of(const Model& model, const PlanRequest& req, const std::string& compute_dtype,
                          std::vector<std::string>* explain) {
  Activation a;
  try {
    if (const ModelDims* d = model.dims.get()) a.hidden = d->hidden;
  } catch (const Error& e) {
    explain->push_back("hidden size unknown (" + e.message() + "): no estimate of what the link carries");
  }
  std::optional<DType> dt = compute_dtype.empty() ? req.dtype : dtype_from_name(compute_dtype);
  if (!dt || !is_floating(*dt)) dt = DType::kF32;
  // 8-bit weights still pass bfloat16 hidden states between layers.
  if (dtype_bits(*dt) < 16) dt = DType::kBF16;
  a.dtype = std::string(torch_name(*dt));
  a.element_bytes = dtype_bits(*dt) / 8.0;
  return a;
}

void estimate_speed(const PipelineRequest& req, const Activation& act, PipelinePlan* p) {
  const std::size_t s = p->stages.size();
  const double batch = static_cast<double>(p->batch);
  const double per_seq = static_cast<double>(act.hidden) * act.element_bytes;
  p->bytes_per_boundary = static_cast<std::uint64_t>(per_seq * batch);
  p->bytes_per_token = static_cast<std::uint64_t>(per_seq * static_cast<double>(s - 1));
  const LinkSpec& l = req.link;
  // Each boundary carries the batch's hidden states; the last stage sends the sampled ids back to
  // the first (8 bytes each), which embeds them for the next step.
  auto link_time = [&](double seqs) {
    if (s < 2) return 0.0;
    return static_cast<double>(s - 1) * (l.latency_s + seqs * per_seq / l.bytes_per_s) + l.latency_s +
           seqs * 8 / l.bytes_per_s;
  };
  p->link_s = link_time(batch);
  double sum = 0;
  for (const PipelineStage& st : p->stages) sum += st.step_s;
  p->decode_tokens_per_s = batch / (sum + p->link_s);
  // GPipe over decode: m micro-batches in flight, each stage working on one at a time. A round
  // (every sequence one token further) lasts as long as the busiest stage's m micro-steps, and at
  // least one micro-batch's own trip round the ring.
  const std::int64_t m = p->micro_batches;
  const double micro = std::ceil(batch / static_cast<double>(m));
  double busiest = 0, trip = link_time(micro);
  for (std::size_t i = 0; i < s; ++i) {
    const double send = i + 1 < s ? micro * per_seq / l.bytes_per_s : 0;
    busiest = std::max(busiest, p->stages[i].micro_step_s + send);
    trip += p->stages[i].micro_step_s;
  }
  p->pipelined_tokens_per_s = batch / std::max(static_cast<double>(m) * busiest, trip);
}

std::string seconds_text(double s) {
  return s >= 1 ? fmt::format("{:.2f} s", s) : s >= 1e-3 ? fmt::format("{:.2f} ms", s * 1e3) : fmt::format("{:.1f} µs", s * 1e6);
}

void explain_result(const PipelineRequest& req, const Activation& act, PipelinePlan* p) {
  for (std::size_t i = 0; i < p->stages.size(); ++i) {
    const PipelineStage& st = p->stages[i];
    std::string devices;
    for (const auto& [k, v] : st.plan.bytes_per_device)
      if (v > 0) devices += fmt::format("{}{}: {}", devices.empty() ? "" : ", ", k, convert_bytes(v));
    p->explain.push_back(fmt::format("node {}: {} … {} ({} units): weights {}, KV cache {}; {}; decode step ~{}",
                                     st.node, st.units.front(), st.units.back(), st.units.size(),
                                     convert_bytes(static_cast<double>(st.weights)),
                                     convert_bytes(static_cast<double>(st.kv_cache)), devices,
                                     seconds_text(st.step_s)));
  }
  if (p->stages.size() > 1 && act.hidden > 0)
    p->explain.push_back(fmt::format(
        "sent per token: hidden {} × {} = {} per stage boundary, {} boundar{}; link {:g} Gb/s, {} one way: {} per "
        "step",
        act.hidden, act.dtype, convert_bytes(act.hidden * act.element_bytes), p->stages.size() - 1,
        p->stages.size() == 2 ? "y" : "ies", req.link.bytes_per_s * 8 / 1e9, seconds_text(req.link.latency_s),
        seconds_text(p->link_s)));
  p->explain.push_back(fmt::format("decode ~{:.1f} tokens/s at batch {} (stages in turn)", p->decode_tokens_per_s,
                                   p->batch));
  if (p->micro_batches > 1)
    p->explain.push_back(fmt::format("pipelined ~{:.1f} tokens/s ({} micro-batches in flight)",
                                     p->pipelined_tokens_per_s, p->micro_batches));
}

}  // namespace

Result<PipelinePlan> plan_pipeline(const Model& model, const PipelineRequest& req) {
  return capture([&]() -> PipelinePlan {
    if (req.nodes.empty()) throw Error(ErrorCode::kInvalidArgument, "--nodes: no nodes given");
    const bool compat = model.request.mode == Mode::kAccelerate;
    const TensorTree tree = for_era(model.tree, compat);
    PipelinePlan p;
    p.strategy = req.plan.strategy;
    p.model_class = tree.class_name();
    p.balance = req.balance;
    p.link = req.link;
    p.batch = static_cast<std::int64_t>(std::max<std::uint64_t>(1, req.plan.batch));
    std::map<std::string, std::uint64_t> kv;
    std::uint64_t activations = 0;
    std::string compute_dtype;
    if (model.has_config) runtime_parts(model, req.plan, tree, &kv, &activations, &p.explain, &compute_dtype);
    const std::vector<Unit> units = sized_units(tree, req.plan, compat, kv);
    const std::vector<std::size_t> starts = split_units(req, units, activations, &p.explain);
    std::vector<TensorTree> subs;
    for (std::size_t s = 0; s < starts.size(); ++s)
      subs.push_back(stage_tree(tree, units, starts[s], s + 1 < starts.size() ? starts[s + 1] : units.size()));
    note_split_ties(tree, subs, &p.explain);
    const AccelerateOptions opt = accelerate_options(req.plan, compat);
    std::vector<StageBytes> placed;
    for (std::size_t s = 0; s < starts.size(); ++s) {
      const std::size_t end = s + 1 < starts.size() ? starts[s + 1] : units.size();
      const NodeSpec& node = req.nodes[s];
      PipelineStage st;
      st.node = node.name;
      PlanRequest r = req.plan;
      r.max_memory = node.max_memory;
      r.kv_bytes.clear();
      r.activation_bytes = activations;
      double kv_total = 0;
      for (std::size_t u = starts[s]; u < end; ++u) {
        st.units.push_back(units[u].name);
        st.weights += static_cast<std::uint64_t>(units[u].weights);
        kv_total += units[u].kv;
        if (units[u].kv > 0) r.kv_bytes[units[u].name] = static_cast<std::uint64_t>(units[u].kv);
      }
      st.kv_cache = static_cast<std::uint64_t>(kv_total);
      Result<PlanResult> planned = plan_tree(subs[s], r, compat);
      if (!planned)
        throw Error(planned.error().code(), fmt::format("node '{}' ({} … {}): {}", node.name, st.units.front(),
                                                        st.units.back(), planned.error().message()));
      st.plan = std::move(planned).value();
      st.plan.device_map = confine_to_stage(st.plan.device_map, units, starts[s], end);
      if (st.plan.fit) st.plan.fit->device_map = st.plan.device_map;
      placed.push_back(placed_bytes(subs[s], st.plan, opt));
      st.step_s = step_seconds(placed.back(), kv_total, touched(model, p.batch), node, req.speeds);
      p.stages.push_back(std::move(st));
    }
    const Activation act = activation_of(model, req.plan, compute_dtype, &p.explain);
    p.hidden = act.hidden;
    p.activation_dtype = act.dtype;
    // Micro-batch step times: the same weights, the micro-batch's share of the KV cache.
    p.micro_batches = std::max<std::int64_t>(1, std::min<std::int64_t>(static_cast<std::int64_t>(starts.size()), p.batch));
    const std::int64_t m = p.micro_batches;
    const double share = std::ceil(static_cast<double>(p.batch) / static_cast<double>(m)) / static_cast<double>(p.batch);
    for (std::size_t s = 0; s < starts.size(); ++s) {
      PipelineStage& st = p.stages[s];
      st.micro_step_s = step_seconds(placed[s], static_cast<double>(st.kv_cache) * share,
                                     touched(model, static_cast<std::int64_t>(share * static_cast<double>(p.batch))),
                                     req.nodes[s], req.speeds);
    }
    estimate_speed(req, act, &p);
    explain_result(req, act, &p);
    return p;
  });
}

nlohmann::ordered_json pipeline_to_json(const PipelinePlan& p) {
  nlohmann::ordered_json j;
  j["strategy"] = std::string(strategy_name(p.strategy));
  j["model_class"] = p.model_class;
  j["balance"] = p.balance == Balance::kCompute ? "compute" : "memory";
  j["link"] = {{"bytes_per_s", p.link.bytes_per_s}, {"latency_s", p.link.latency_s}};
  j["hidden"] = p.hidden;
  j["activation_dtype"] = p.activation_dtype;
  j["bytes_per_boundary"] = p.bytes_per_boundary;
  j["bytes_per_token"] = p.bytes_per_token;
  j["link_s_per_step"] = p.link_s;
  j["batch"] = p.batch;
  j["micro_batches"] = p.micro_batches;
  j["decode_tokens_per_s"] = p.decode_tokens_per_s;
  j["pipelined_tokens_per_s"] = p.pipelined_tokens_per_s;
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const PipelineStage& st : p.stages) {
    nlohmann::ordered_json n;
    n["name"] = st.node;
    n["first_unit"] = st.units.front();
    n["last_unit"] = st.units.back();
    n["units"] = st.units.size();
    n["weights"] = st.weights;
    n["kv_cache"] = st.kv_cache;
    n["step_s"] = st.step_s;
    n["micro_step_s"] = st.micro_step_s;
    n["plan"] = plan_to_json(st.plan);
    nodes.push_back(std::move(n));
  }
  j["nodes"] = std::move(nodes);
  j["explain"] = p.explain;
  return j;
}

}  // namespace memfit::plan
