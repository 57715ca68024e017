// native/cli/cli_error.h — a command's failure: the exit code it maps to and one line for stderr.
#pragma once

#include <exception>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "exit_codes.h"
#include "failure.h"
#include "memfit/error.h"

namespace memfit::cli {

struct CliError {
  int exit_code;
  std::string message;
};

// Core names a request's options as the JSON API does ("context", "train.method"); the CLI
// prints its flags in their place (option_flags.cpp).
std::string cli_message(const Error& e);
// The exit code for the Error's code and its message as the CLI prints it.
CliError cli_error(const Error& e);

// In the commands a core Error becomes a CliError with the flags spelled (memfit::raise below the
// CLI keeps core's option names).
[[noreturn]] inline void cli_raise(const Error& e) { throw cli_error(e); }
template <typename T>
T cli_value(Result<T> r) {
  if (!r) cli_raise(r.error());
  return std::move(r).value();
}

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
    return fail(exit_code_for(e.code()), cli_message(e));
  } catch (const std::exception& e) {
    return fail(kExitInternal, e.what());
  }
}

}  // namespace memfit::cli
