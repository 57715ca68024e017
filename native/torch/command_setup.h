// native/torch/command_setup.h — what `forward` and `generate` share: load a checkpoint by its
// placement options (with a progress bar), build its family's program, and an Executor with the
// options the user gave (prefetch, threads, compute dtype).
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "compute_threads.h"
#include "executor.h"
#include "torch_commands.h"

namespace memfit::torchrt {

using OJson = nlohmann::ordered_json;

// `stage`: load one pipeline stage (load_plan.h's StagePicker); the executor runs its range.
std::unique_ptr<LoadedModel> load_with_progress(const std::string& dir, const PlacementArgs& placement,
                                                const StagePicker& stage = {});
OJson load_json(const LoadedModel& m);  // `memfit load --json`'s report

struct ExecSetup {
  ExecSetup(const std::string& dir, const PlacementArgs& placement, const ExecArgs& args,
            const StagePicker& stage = {});
  ~ExecSetup();
  std::unique_ptr<LoadedModel> model;
  std::unique_ptr<ModelProgram> program;
  ExecOptions options;
  int threads = 0;
  ComputeThreads split;
  std::unique_ptr<Executor> exec;  // last: it refers to model and program
};

}  // namespace memfit::torchrt
