// memfit-torch — `memfit load` and `memfit forward` on LibTorch. A separate executable so that
// `memfit estimate` never links or loads LibTorch (286 shared libraries, slow to load); `memfit`
// execs this program from its own folder for these two subcommands.
#include <CLI/CLI.hpp>

#include "exit_codes.h"
#include "memfit/plan/strategy.h"
#include "torch_commands.h"

namespace {

void placement_options(CLI::App* app, memfit::torchrt::PlacementArgs& p) {
  app->add_option("--device-map", p.device_map,
                  memfit::plan::strategy_list() + ", a JSON file (memfit plan --output), "
                  "or inline JSON such as '{\"\": \"disk\"}' (default: all on the execution device)");
  app->add_option("--max-memory", p.max_memory, "budgets, e.g. 0=8GiB,cpu=16GiB (default: what is free)");
  app->add_option("--offload-folder", p.offload_folder, "offload folder for .bin weights placed on disk");
  app->add_option("--dtype", p.dtype, "dtype of the weights in memory (default float32)");
  app->add_option("--config", p.config, "config.json (or its folder) when it is not next to the weights");
  app->add_flag("--allow-missing", p.allow_missing, "load even if the checkpoint lacks some tensors");
  app->add_flag("--ignore-unexpected", p.ignore_unexpected, "skip tensors the model does not have");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"memfit-torch: load and run models on LibTorch (as `memfit load` / `memfit forward`)"};
  app.require_subcommand(1);

  memfit::torchrt::LoadArgs load;
  CLI::App* load_cmd = app.add_subcommand(
      "load", "Validate a checkpoint against its config, load it by a device map, report placement, "
              "time, GB/s and peak RSS");
  load_cmd->add_option("dir", load.dir, "model folder, .safetensors/.bin file, or index")->required();
  placement_options(load_cmd, load.placement);
  load_cmd->add_flag("--json", load.json, "print JSON");

  memfit::torchrt::ForwardArgs fwd;
  CLI::App* fwd_cmd = app.add_subcommand("forward", "Run a forward pass to logits (block by block, offloaded "
                                                     "weights streamed with prefetch)");
  fwd_cmd->add_option("dir", fwd.dir, "model folder, .safetensors/.bin file, or index")->required();
  fwd_cmd->add_option("--tokens", fwd.tokens, "token ids, e.g. 464,2068,7586; rows separated by ';'")->required();
  placement_options(fwd_cmd, fwd.placement);
  fwd_cmd->add_flag("--no-prefetch", fwd.no_prefetch, "fetch each block's weights only when it runs");
  fwd_cmd->add_option("--prefetch-depth", fwd.prefetch_depth, "blocks fetched ahead (default 1)")
      ->check(CLI::Range(1, 64));
  fwd_cmd->add_option("--threads", fwd.threads, "compute threads: OpenBLAS's where LibTorch calls a threaded OpenBLAS, else LibTorch's (default: one per core; one fewer when disk weights stream with prefetch)")->check(CLI::Range(0, 1024));
  fwd_cmd->add_option("--generate", fwd.generate, "greedy new tokens after the prompt (KV cache)")
      ->check(CLI::Range(0, 4096));
  fwd_cmd->add_option("--repeat", fwd.repeat, "forward passes to run (timing)")->check(CLI::Range(1, 1000));
  fwd_cmd->add_flag("--evict", fwd.evict, "drop disk weights from the page cache after use (benchmarks)");
  fwd_cmd->add_flag("--json", fwd.json, "print JSON: shape, last_logits, seconds, …");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : memfit::cli::kExitUsage;
  }
  if (load_cmd->parsed()) return memfit::torchrt::run_load(load);
  if (fwd_cmd->parsed()) return memfit::torchrt::run_forward(fwd);
  return memfit::cli::kExitUsage;
}
