// tests/support/run_process.h — run the memfit binary and capture its output and exit code.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace memfit::test {

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs MEMFIT_CLI_PATH with args; `env` entries are added to (or override) the environment.
// HOME is pointed at a fresh temporary folder unless `env` sets it, and the Hub's variables
// (token, endpoint, offline, cache folders) are dropped, so no user cache/token leaks in.
ProcessResult run_memfit(const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& env = {});

// Runs argv[0] (found on PATH when it has no '/') with the rest as its arguments, the same way
// (environment, fresh HOME, captured output). exit_code stays -1 when it cannot be started.
ProcessResult run_program(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env = {});

}  // namespace memfit::test
