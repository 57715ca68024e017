#include "torch_commands.h"

#include <ATen/Parallel.h>


#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "command_setup.h"
#include "half_linear.h"
#include "hub_model.h"
#include "failure.h"
#include "memfit/plan/plan.h"
#include "memfit/report/convert_bytes.h"
#include "progress_bar.h"
#include "torch_types.h"

namespace memfit::torchrt {

namespace {

// How `load` names the format (its JSON's "format", the text report).
const char* format_label(checkpoint::Format format) {
  return format == checkpoint::Format::kPytorchBin ? "bin" : "safetensors";
}

LoadRequest request_of(const std::string& dir, const PlacementArgs& p) {
  LoadRequest r;
  r.checkpoint = dir;
  r.config = p.config;
  r.device_map = p.device_map;
  r.max_memory = p.max_memory;
  r.allow_missing = p.allow_missing;
  r.ignore_unexpected = p.ignore_unexpected;
  if (!p.dtype.empty()) {
    r.dtype = dtype_from_name(p.dtype);
    if (!r.dtype) throw Failure{FailureKind::kUsage, fmt::format("--dtype: unknown dtype '{}'", p.dtype)};
  }
  return r;
}

}  // namespace

std::unique_ptr<LoadedModel> load_with_progress(const std::string& dir, const PlacementArgs& p,
                                                const StagePicker& stage) {
  LoadRequest request = request_of(dir, p);
  request.stage = stage;
  LoadPlan plan = make_load_plan(request, device_inventory());
  for (const auto& w : plan.source.warnings) fmt::print(stderr, "memfit: warning: {}\n", w);
  if (!plan.comparison.missing.empty())
    fmt::print(stderr, "memfit: warning: {} tensor(s) missing from the checkpoint (--allow-missing)\n",
               plan.comparison.missing.size());
  ProgressBar bar("loading");
  LoadOptions opt;
  opt.offload_folder = p.offload_folder;
  opt.progress = [&bar](std::uint64_t done, std::uint64_t total) {
    bar.update(done, total);
    return true;
  };
  return load_model(std::move(plan), opt);
}

namespace {

OJson placement_json(const LoadedModel& m) {
  OJson per = OJson::object();
  for (const auto& w : m.weights) {
    const std::string key = w.device.key();
    const double bytes = w.on_disk() ? static_cast<double>(w.nbytes)
                                     : static_cast<double>(w.tensor.numel() * w.tensor.element_size());
    per[key] = per.value(key, 0.0) + bytes;
  }
  return per;
}

}  // namespace

OJson load_json(const LoadedModel& m) {
  const LoadStats& s = m.stats;
  OJson j;
  j["checkpoint"] = m.plan.source.path;
  j["format"] = format_label(m.plan.source.format);
  j["model_type"] = m.plan.model_type;
  j["model_class"] = m.plan.tree.class_name();
  j["tensors"] = m.weights.size();
  j["skipped"] = m.plan.skipped;
  j["missing"] = m.plan.comparison.missing;
  j["dtype"] = std::string(torch_name(m.plan.dtype));
  j["device_map_origin"] = m.plan.device_map_origin;
  j["device_map"] = plan::device_map_to_json(m.plan.device_map);
  j["execution_device"] = m.exec_device.str();
  j["bytes_per_device"] = placement_json(m);
  j["bytes"] = s.bytes_read;
  j["seconds"] = s.seconds;
  j["gb_per_s"] = s.seconds > 0 ? static_cast<double>(s.bytes_read) / s.seconds / 1e9 : 0.0;
  j["largest_tensor_bytes"] = s.largest_tensor_bytes;
  j["rss_before_bytes"] = s.before.rss_bytes;
  j["rss_bytes"] = s.after.rss_bytes;
  j["peak_rss_bytes"] = s.after.peak_rss_bytes;
  j["cpu_resident_bytes"] = s.cpu_bytes;
  return j;
}

namespace {

void print_load_text(const LoadedModel& m) {
  const LoadStats& s = m.stats;
  fmt::print("{} ({}, {} {}): {} tensors, {} in {:.3f} s ({:.2f} GB/s)\n", m.plan.source.path,
             format_label(m.plan.source.format), m.plan.model_type, m.plan.tree.class_name(), m.weights.size(),
             convert_bytes(static_cast<double>(s.bytes_read)), s.seconds,
             s.seconds > 0 ? static_cast<double>(s.bytes_read) / s.seconds / 1e9 : 0.0);
  fmt::print("device map ({}): {}\n", m.plan.device_map_origin, plan::device_map_to_json(m.plan.device_map).dump());
  for (const auto& [k, v] : placement_json(m).items())
    fmt::print("  {:<5} {}\n", k, convert_bytes(v.get<double>()));
  fmt::print("execution device: {}; weights in {}\n", m.exec_device.str(), torch_name(m.plan.dtype));
  fmt::print("peak RSS {} (before loading {}; CPU-resident weights {}; largest tensor {})\n",
             convert_bytes(static_cast<double>(s.after.peak_rss_bytes)),
             convert_bytes(static_cast<double>(s.before.rss_bytes)),
             convert_bytes(static_cast<double>(s.cpu_bytes)),
             convert_bytes(static_cast<double>(s.largest_tensor_bytes)));
}

}  // namespace

std::vector<std::vector<long long>> parse_token_rows(const std::string& text) {
  std::vector<std::vector<long long>> rows(1);
  std::string cur;
  auto flush = [&]() {
    const std::string t = cur;
    cur.clear();
    std::size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(t, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (t.empty() || used != t.size() || v < 0)
      throw Failure{FailureKind::kUsage, fmt::format("--tokens: '{}' is not a token id", t)};
    rows.back().push_back(v);
  };
  for (char c : text) {
    if (c == ',') flush();
    else if (c == ';') flush(), rows.emplace_back();
    else if (c != ' ') cur += c;
  }
  flush();
  for (const auto& r : rows)
    if (r.size() != rows.front().size())
      throw Failure{FailureKind::kUsage, fmt::format("--tokens: rows have {} and {} ids; a batch needs equal "
                                                  "lengths (no padding)", rows.front().size(), r.size())};
  return rows;
}

void run_load(const LoadArgs& args) {
  const auto model = load_with_progress(local_model(args.dir, args.placement, {}), args.placement);
  if (args.json) fmt::print("{}\n", load_json(*model).dump(2));
  else print_load_text(*model);
}

ExecSetup::ExecSetup(const std::string& dir, const PlacementArgs& placement, const ExecArgs& args,
                     const StagePicker& stage)
    : model(load_with_progress(dir, placement, stage)),
      program(make_program(model->plan.model_type, model->plan.model, model->plan.tree)) {
  options.prefetch = !args.no_prefetch;
  options.prefetch_depth = args.prefetch_depth;
  options.evict_page_cache = args.evict;
  if (const auto& st = model->plan.stage) {
    options.first_stage = st->first_stage;
    options.end_stage = st->end_stage;
  }
  options.compute_dtype = default_compute_dtype(*model);
  if (!args.compute_dtype.empty()) {
    const auto dt = dtype_from_name(args.compute_dtype);
    if (!dt || !is_floating(*dt))
      throw Failure{FailureKind::kUsage,
                    fmt::format("--compute-dtype: '{}' is not a floating dtype (float32, float16, bfloat16)",
                                args.compute_dtype)};
    options.compute_dtype = to_scalar_type(*dt, "--compute-dtype");
  }
  threads = args.threads > 0 ? args.threads : default_compute_threads(*model, options);
  split = apply_compute_threads(threads);
  set_half_linear_threads(threads);
  exec = std::make_unique<Executor>(*model, *program, options);
}

ExecSetup::~ExecSetup() = default;

void run_forward(const ForwardArgs& args) {
  const auto rows = parse_token_rows(args.tokens);
  ExecSetup setup(local_model(args.dir, args.placement, {}), args.placement, args.exec);
  const auto& model = setup.model;
  const ExecOptions& opt = setup.options;
  const int threads = setup.threads;
  const ComputeThreads split = setup.split;
  Executor& exec = *setup.exec;

  std::vector<std::int64_t> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  const auto ids = at::tensor(flat, at::TensorOptions().dtype(at::kLong))
                       .view({static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(rows[0].size())});
  at::Tensor logits;
  std::vector<double> times;
  for (int i = 0; i < std::max(1, args.repeat); ++i) {
    logits = exec.forward(ids);
    times.push_back(exec.stats().seconds);
  }
  std::vector<std::int64_t> generated;
  if (args.generate > 0) {
    if (rows.size() != 1) throw Failure{FailureKind::kUsage, "--generate takes one row of --tokens"};
    generated = exec.generate(flat, args.generate);
  }
  const auto B = logits.size(0), T = logits.size(1), V = logits.size(2);
  const at::Tensor last = logits.select(1, T - 1).contiguous();
  if (args.json) {
    OJson j;
    j["shape"] = {B, T, V};
    OJson ll = OJson::array();
    for (std::int64_t b = 0; b < B; ++b) {
      const float* p = last[b].data_ptr<float>();
      ll.push_back(std::vector<float>(p, p + V));
    }
    j["last_logits"] = ll;
    j["argmax_last"] = std::vector<std::int64_t>();
    for (std::int64_t b = 0; b < B; ++b) j["argmax_last"].push_back(last[b].argmax().item<std::int64_t>());
    j["seconds"] = times.back();
    j["seconds_per_forward"] = times;
    j["streamed_bytes"] = exec.stats().streamed_bytes;
    j["wait_seconds"] = exec.stats().wait_seconds;
    j["read_bytes"] = exec.stats().read_bytes;
    j["read_seconds"] = exec.stats().read_seconds;
    j["staging_buffers"] = exec.stats().staging_buffers;
    j["most_reads_at_once"] = exec.stats().most_reads_at_once;
    j["staging_buffer_bytes"] = exec.stats().staging_buffer_bytes;
    j["prefetch"] = opt.prefetch;
    j["threads"] = threads;
    j["aten_threads"] = split.aten;
    j["blas_threads"] = split.blas;
    j["compute_dtype"] = std::string(torch_name(from_scalar_type(opt.compute_dtype)));
    j["load"] = load_json(*model);
    if (args.generate > 0) j["generated"] = generated;
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("logits [{}, {}, {}] in {:.4f} s (execution device {}, {} streamed, prefetch {})\n", B, T, V,
               times.back(), model->exec_device.str(),
               convert_bytes(static_cast<double>(exec.stats().streamed_bytes)), opt.prefetch ? "on" : "off");
    for (std::int64_t b = 0; b < B; ++b)
      fmt::print("  row {}: argmax at the last position {}\n", b, last[b].argmax().item<std::int64_t>());
    if (!generated.empty()) fmt::print("  greedy: {}\n", fmt::join(generated, ","));
  }
}

}  // namespace memfit::torchrt
