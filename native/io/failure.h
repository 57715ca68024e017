// native/io/failure.h — the error native code below the CLI throws (io, checkpoint, memfit-torch):
// what kind of failure, and one line for stderr naming the file, tensor or flag.
//
// Core's memfit::Error keeps its code; code here that calls core turns a failed Result into a
// Failure of the matching kind (failure_kind). Each program's main maps kinds to exit codes
// (README "Exit codes"): memfit in native/cli/exit_codes.h, memfit-torch in torch_main.cpp.
#pragma once

#include <string>
#include <utility>

#include "memfit/error.h"

namespace memfit {

enum class FailureKind {
  kFile,          // a local file cannot be opened, read or written
  kInvalidInput,  // malformed bytes, JSON, values or shapes
  kUnsupported,   // valid input memfit cannot handle (a dtype, a model_type, a compressed entry)
  kUsage,         // a bad argument or flag value
  kMismatch,      // a checkpoint that does not match its config
  kCancelled,     // a load cancelled by its progress callback: nothing was kept
  kInternal,
  // The Hub (hub::HubError's kinds, as far as a program's exit code tells them apart)
  kGated,
  kRepoNotFound,
  kEntryNotFound,
  kNetwork,
};

struct Failure {
  FailureKind kind;
  std::string message;
};

// Core's codes by kind: format errors are invalid input; valid files memfit cannot read in place
// (compressed or encrypted zip entries, legacy torch.save, unknown storage types) are unsupported.
FailureKind failure_kind(ErrorCode code);

[[noreturn]] inline void raise(const Error& e) { throw Failure{failure_kind(e.code()), e.message()}; }

// The value, or the error as a Failure.
template <typename T>
T value_or_raise(Result<T> r) {
  if (!r) raise(r.error());
  return std::move(r).value();
}

}  // namespace memfit
