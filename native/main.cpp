// memfit — will it fit? The command-line face of memfit's core.
#include <CLI/CLI.hpp>

#include "estimate_command.h"
#include "inspect_command.h"
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
  estimate->add_option("--source", est.source,
                       "auto (safetensors headers when a folder has them), config, checkpoint");
  estimate->add_flag("--exact", est.exact,
                     "for a Hub id: read the safetensors headers (HTTP Range) for exact sizes");
  estimate->add_flag("--json", est.json, "print the report as JSON");

  memfit::cli::InspectArgs ins;
  CLI::App* inspect = app.add_subcommand(
      "inspect", "List the tensors of a safetensors file, sharded folder or Hub repo (headers only)");
  inspect->add_option("target", ins.target, "FILE.safetensors, index.json, folder, or org/name")
      ->required();
  inspect->add_flag("--json", ins.json, "print JSON");

  memfit::cli::ValidateArgs val;
  CLI::App* validate = app.add_subcommand(
      "validate", "Compare a checkpoint with the tensors its config implies, by name");
  validate->add_option("config", val.config, "config.json, model folder, or org/name")->required();
  validate->add_option("checkpoint", val.checkpoint, "FILE.safetensors, index.json, folder, or org/name")
      ->required();
  validate->add_option("--class", val.class_name, "model class (default: architectures[0])");
  validate->add_flag("--json", val.json, "print JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : memfit::cli::kExitUsage;
  }
  if (estimate->parsed()) return memfit::cli::run_estimate(est);
  if (inspect->parsed()) return memfit::cli::run_inspect(ins);
  if (validate->parsed()) return memfit::cli::run_validate(val);
  return memfit::cli::kExitUsage;
}
