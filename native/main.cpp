// memfit — will it fit? The command-line face of memfit's core.
#include <CLI/CLI.hpp>

#include "estimate_command.h"
#include "exit_codes.h"

int main(int argc, char** argv) {
  CLI::App app{"memfit: memory estimates and device maps for large models"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "memfit 0.1.0");

  memfit::cli::EstimateArgs est;
  CLI::App* estimate = app.add_subcommand(
      "estimate", "Memory needed to load (and train) a model, from its config.json");
  estimate->add_option("model", est.model, "Hub id (org/name), a config.json, or a model folder")
      ->required();
  estimate->add_option("--name", est.name, "Name shown in the title (default: MODEL)");
  estimate->add_option("--library_name,--library", est.library, "transformers or timm")
      ->check(CLI::IsMember({"transformers", "timm"}));
  estimate->add_option("--dtypes", est.dtypes,
                       "dtypes to report (float32 float16 bfloat16 int8 int4)");
  estimate->add_option("--compat", est.compat,
                       "'accelerate': reproduce `accelerate estimate-memory` exactly");
  estimate->add_option("--class", est.class_name, "model class to build (e.g. LlamaModel)");
  estimate->add_flag("--json", est.json, "print the report as JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : memfit::cli::kExitUsage;
  }
  if (estimate->parsed()) return memfit::cli::run_estimate(est);
  return memfit::cli::kExitUsage;
}
