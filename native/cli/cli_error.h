// native/cli/cli_error.h — a command's failure: the exit code it maps to and one line for stderr.
#pragma once

#include <exception>
#include <string>

#include <fmt/format.h>

#include "exit_codes.h"
#include "failure.h"
#include "memfit/error.h"

namespace memfit::cli {

struct CliError {
  int exit_code;
  std::string message;
};

// Runs a command's body. A CliError, a Failure from the layers below, a core Error or any other
// exception becomes "memfit: error: MESSAGE" on stderr and the exit code of its kind.
template <typename Fn>
int guarded(Fn&& fn) {
  auto fail = [](int code, const std::string& message) {
    fmt::print(stderr, "memfit: error: {}\n", message);
    return code;
  };
  try {
    return fn();
  } catch (const CliError& e) {
    return fail(e.exit_code, e.message);
  } catch (const Failure& e) {
    return fail(exit_code_for(e.kind), e.message);
  } catch (const Error& e) {
    return fail(exit_code_for(e.code()), e.message());
  } catch (const std::exception& e) {
    return fail(kExitInternal, e.what());
  }
}

}  // namespace memfit::cli
