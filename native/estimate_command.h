// native/estimate_command.h — `memfit estimate`.
#pragma once

#include <string>
#include <vector>

namespace memfit::cli {

struct EstimateArgs {
  std::string model;
  std::string name;
  std::string library;
  std::vector<std::string> dtypes;
  std::string compat;       // "" or "accelerate"
  std::string class_name;   // --class
  std::string source = "auto";  // auto | config | checkpoint
  bool exact = false;            // read safetensors headers from the Hub (HTTP Range)
  bool json = false;
};

// Runs the command, printing to stdout/stderr; returns the process exit code.
int run_estimate(const EstimateArgs& args);

}  // namespace memfit::cli
