// native/torch/uncaught.h — an exception nobody catches (one that leaves a thread, or a noexcept
// function) ends memfit-torch as a named failure — one line on stderr and an exit code — instead
// of std::terminate's SIGABRT without a word.
//
// Why: LibTorch's rendezvous store (c10d::TCPStore) runs background threads that throw when a
// connection is reset — rank 0 leaving (say, with a usage error) while another rank is still
// connecting to it — and that rank then died as a crash, its exit taken for the run's.
#pragma once

#include <string>

namespace memfit::torchrt {

// Installs std::terminate's handler, or changes what it says. `who` starts its line ("rank 2: "
// in a pipeline rank). It exits with `network_code` for a std::system_error (a socket or another
// system call failed) and `internal_code` for anything else.
void name_uncaught_exceptions(std::string who, int network_code, int internal_code);

}  // namespace memfit::torchrt
