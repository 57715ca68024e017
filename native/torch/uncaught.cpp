#include "uncaught.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <system_error>

#include <fmt/format.h>

namespace memfit::torchrt {
namespace {

// Set before any thread that could throw is started (main, then once the rank is known).
std::string g_who;
int g_network_code = 1;
int g_internal_code = 1;

[[noreturn]] void on_terminate() {
  std::string what = "internal error: std::terminate was called without an exception";
  int code = g_internal_code;
  if (const std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::system_error& s) {
      what = fmt::format("a connection or system call failed where nothing could catch it, so this process stops: {}",
                         s.what());
      code = g_network_code;
    } catch (const std::exception& s) {
      what = fmt::format("internal error: an exception nothing caught: {}", s.what());
    } catch (...) {
      what = "internal error: an exception nothing caught";
    }
  }
  fmt::print(stderr, "memfit: error: {}{}\n", g_who, what);
  std::fflush(stderr);
  // Other threads may still hold locks a normal exit's destructors would wait on.
  std::_Exit(code);
}

}  // namespace

void name_uncaught_exceptions(std::string who, int network_code, int internal_code) {
  g_who = std::move(who);
  g_network_code = network_code;
  g_internal_code = internal_code;
  std::set_terminate(on_terminate);
}

}  // namespace memfit::torchrt
