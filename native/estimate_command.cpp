#include "estimate_command.h"

#include <cstdio>

#include <fmt/format.h>

#include "exit_codes.h"
#include "memfit/convert_bytes.h"
#include "memfit/estimate.h"
#include "memfit/report_json.h"
#include "model_source.h"

namespace memfit::cli {
namespace {

std::string with_commas(std::uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

void print_memfit_details(const Report& r) {
  fmt::print("model class: {} ({} {}), {} parameters, buffers {}\n", r.model_class, r.library,
             r.model_type, with_commas(r.parameters), convert_bytes(r.buffers_bytes));
  std::string names;
  for (std::size_t i = 0; i < r.largest_layer_names.size() && i < 4; ++i)
    names += (i ? ", " : "") + r.largest_layer_names[i];
  if (r.largest_layer_names.size() > 4)
    names += fmt::format(" (+{} more of the same size)", r.largest_layer_names.size() - 4);
  fmt::print("largest layer: {}\n", names);
  for (const auto& row : r.rows) {
    if (row.training_parts.empty()) continue;
    std::string parts;
    for (const auto& p : row.training_parts)
      if (p.bytes > 0) parts += fmt::format("{}{} {}", parts.empty() ? "" : " + ", p.name, convert_bytes(p.bytes));
    fmt::print("training {} (AdamW, mixed precision): {} = {}\n", row.dtype, parts, row.training);
  }
  for (const auto& n : r.notes) fmt::print("note: {}\n", n);
}

}  // namespace

int run_estimate(const EstimateArgs& args) {
  try {
    if (!args.compat.empty() && args.compat != "accelerate")
      throw CliError{kExitUsage, fmt::format("--compat: unknown value '{}' (only 'accelerate')",
                                             args.compat)};
    hub::HubClient client(hub::HubOptions::from_environment());
    const ModelSource src = resolve_model(args.model, {args.library, args.name}, &client);
    EstimateRequest req;
    req.config_text = src.config_text;
    req.name = src.name;
    req.library = src.library;
    req.mode = args.compat == "accelerate" ? Mode::kAccelerate : Mode::kMemfit;
    req.dtypes = args.dtypes;
    req.class_override = args.class_name;
    const Result<Report> report = estimate(req);
    if (!report) {
      const Error& e = report.error();
      if (args.json) fmt::print(stderr, "{}\n", error_to_json(e).dump());
      else fmt::print(stderr, "memfit: error: {}\n", e.message());
      return exit_code_for(e.code());
    }
    if (args.json) {
      fmt::print("{}\n", report_to_json(*report).dump(2));
    } else {
      fmt::print("{}\n", render_table(*report));
      if (req.mode == Mode::kMemfit) print_memfit_details(*report);
    }
    return kExitOk;
  } catch (const CliError& e) {
    fmt::print(stderr, "memfit: error: {}\n", e.message);
    return e.exit_code;
  }
}

}  // namespace memfit::cli
