// native/cli/plan_command.h — `memfit plan`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memfit/memory/options.h"

namespace memfit::cli {

struct PlanArgs {
  std::string model;
  std::string max_memory;            // "0=24GiB,1=24GiB,cpu=64GiB"
  std::string strategy = "auto";     // --device-map
  std::string dtype;
  std::vector<std::string> no_split;
  std::vector<std::string> special_dtypes;  // NAME=DTYPE
  bool offload_buffers = false;
  bool no_disk = false;
  // Text as given (sizes with units); the defaults are the run options' own.
  std::string context = std::to_string(kRunDefaults.context), batch = std::to_string(kRunDefaults.batch);
  std::string overhead = std::to_string(static_cast<std::uint64_t>(kRunDefaults.overhead_bytes));
  std::string class_name, library;
  std::string compat;  // "accelerate": accelerate's AutoModel class and 4.40 buffers
  bool explain = false, json = false;
  std::string output;  // write the device map here (atomically)
  std::string check;   // validate this device map file instead of planning
  // Several hosts (pipeline stages): "a=0:24GiB,cpu:64GiB;b=0:24GiB,cpu:32GiB", the link between
  // them and what the stages are balanced by.
  std::string nodes, link = "10Gbps", balance = "memory";
};

int run_plan(const PlanArgs& args);

}  // namespace memfit::cli
