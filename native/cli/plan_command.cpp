#include "plan_command.h"

#include <cstdio>

#include <fmt/format.h>

#include "atomic_write.h"
#include "cli_error.h"
#include "file_reader.h"
#include "memfit/plan/pipeline.h"
#include "memfit/plan/plan.h"
#include "memfit/report/convert_bytes.h"
#include "model_source.h"
#include "option_flags.h"

namespace memfit::cli {
namespace {

std::uint64_t count_arg(const std::string& s, const char* what) {
  auto v = plan::parse_size(s);
  if (!v) throw CliError{kExitUsage, fmt::format("--{}: '{}' is not a non-negative integer", what, s)};
  return *v;
}

// The model plan sizes: by default the class `from_pretrained` builds (architectures[0], with
// its head) as current transformers allocates it — the model `load`, `forward` and `generate`
// load, so a map written by `plan` always loads. --compat accelerate: accelerate's AutoModel
// class with transformers 4.40's buffers, the maps `accelerate` itself prints.
EstimateRequest model_request(const PlanArgs& args, const ModelSource& src) {
  return cli::model_request(src, args.compat, args.class_name);
}

plan::PlanRequest build_request(const PlanArgs& args) {
  plan::PlanRequest req;
  if (!args.max_memory.empty()) req.max_memory = cli_value(plan::parse_max_memory(args.max_memory));
  req.strategy = cli_value(capture([&] { return plan::parse_strategy(args.strategy, "--device-map"); }));
  if (!args.dtype.empty()) {
    auto dt = dtype_from_name(args.dtype);
    if (!dt) throw CliError{kExitUsage, fmt::format("--dtype: unknown dtype '{}'", args.dtype)};
    req.dtype = dt;
  }
  if (!args.no_split.empty()) req.no_split = args.no_split;
  for (const auto& s : args.special_dtypes) {
    const auto eq = s.rfind('=');
    auto dt = eq == std::string::npos ? std::nullopt : dtype_from_name(s.substr(eq + 1));
    if (!dt) throw CliError{kExitUsage, fmt::format("--special-dtype: '{}' is not NAME=DTYPE", s)};
    req.special_dtypes[s.substr(0, eq)] = *dt;
  }
  req.offload_buffers = args.offload_buffers;
  req.no_disk = args.no_disk;
  req.context = count_arg(args.context, "context");
  req.batch = count_arg(args.batch, "batch");
  req.overhead_bytes = cli_value(plan::parse_size(args.overhead));
  return req;
}

void print_text(const plan::PlanResult& r, bool explain) {
  fmt::print("device map ({}, {}):\n{}\n", plan::strategy_name(r.strategy), r.model_class,
             plan::device_map_to_json(r.device_map).dump());
  for (const auto& line : r.explain)
    if (explain || line.rfind("first streamed", 0) != 0) fmt::print("{}\n", line);
}

// `--nodes`: one stage per host, each mapped onto its own devices.
int run_pipeline(const PlanArgs& args, const Model& model) {
  if (!args.max_memory.empty())
    throw CliError{kExitUsage, "--max-memory and --nodes exclude each other: give each host's budgets in --nodes"};
  plan::PipelineRequest req;
  req.plan = build_request(args);
  req.nodes = cli_value(plan::parse_nodes(args.nodes));
  req.link = cli_value(plan::parse_link(args.link));
  req.balance = args.balance == "compute" ? plan::Balance::kCompute : plan::Balance::kMemory;
  const plan::PipelinePlan p = cli_value(plan::plan_pipeline(model, req));
  if (!args.output.empty()) {
    nlohmann::ordered_json maps = nlohmann::ordered_json::object();
    for (const auto& st : p.stages) maps[st.node] = plan::device_map_to_json(st.plan.device_map);
    io::write_file_atomically(args.output, maps.dump(2) + "\n");
  }
  if (args.json) {
    fmt::print("{}\n", plan::pipeline_to_json(p).dump(2));
    return int{kExitOk};
  }
  fmt::print("pipeline over {} nodes ({}, {}):\n", p.stages.size(), plan::strategy_name(p.strategy), p.model_class);
  for (const auto& st : p.stages) {
    fmt::print("node {}: {}\n", st.node, plan::device_map_to_json(st.plan.device_map).dump());
    if (args.explain)
      for (const auto& line : st.plan.explain) fmt::print("  {}\n", line);
  }
  for (const auto& line : p.explain) fmt::print("{}\n", line);
  return int{kExitOk};
}

}  // namespace

int run_plan(const PlanArgs& args) {
  return guarded([&] {
    hub::HubClient client(hub::HubOptions::from_environment());
    const ModelSource src = resolve_model(args.model, {args.library, ""}, &client);
    if (!args.check.empty()) {
      const Model model = cli_value(build_model(model_request(args, src)));
      const TensorTree tree = for_era(model.tree, model.request.mode == Mode::kAccelerate);
      const plan::DeviceMap map = cli_value(plan::device_map_from_json(io::read_file(args.check), args.check));
      cli_value(plan::check_device_map(tree, map));
      fmt::print("{}: the device map covers every tensor of {}\n", args.check, tree.class_name());
      return int{kExitOk};
    }
    if (!args.nodes.empty()) return run_pipeline(args, cli_value(build_model(model_request(args, src))));
    if (args.max_memory.empty())
      throw CliError{kExitUsage, "--max-memory is required (e.g. 0=24GiB,cpu=64GiB), or --nodes for several hosts"};
    const plan::PlanRequest request = build_request(args);
    const Model model = cli_value(build_model(model_request(args, src)));
    const plan::PlanResult r = cli_value(plan::run_plan(model, request));
    if (!args.output.empty())
      io::write_file_atomically(args.output, plan::device_map_to_json(r.device_map).dump(2) + "\n");
    if (args.json) fmt::print("{}\n", plan::plan_to_json(r).dump(2));
    else print_text(r, args.explain);
    return int{kExitOk};
  });
}

}  // namespace memfit::cli
