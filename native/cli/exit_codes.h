// native/cli/exit_codes.h — one process exit code per kind of failure, so scripts can branch
// (README "Exit codes").
#pragma once

#include "failure.h"
#include "memfit/error.h"

namespace memfit::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,
  kExitUsage = 2,            // bad command line (CLI11 also uses 105–109 for parse errors)
  kExitInvalidInput = 3,     // malformed JSON, missing/wrong keys, bad values, overflow
  kExitUnsupported = 4,      // unknown model_type / class / library
  kExitGated = 5,            // 401/403 GatedRepo: needs a token with access
  kExitRepoNotFound = 6,     // 404 RepoNotFound (or private without access)
  kExitEntryNotFound = 7,    // the repo has no config.json (EntryNotFound)
  kExitNoLibrary = 8,        // no library_name metadata on the Hub: pass --library_name
  kExitNetwork = 9,          // DNS/connect/TLS/timeout, or an unexpected HTTP status
  kExitFile = 10,            // a local file cannot be read
  kExitMismatch = 11,        // `memfit validate`: the checkpoint does not match the config
  kExitNoTorch = 20,         // `memfit load|forward` in a build without LibTorch (no memfit-torch)
  kExitCancelled = 21,       // a load was cancelled (progress callback): nothing was kept
};

inline int exit_code_for(FailureKind kind) {
  switch (kind) {
    case FailureKind::kFile: return kExitFile;
    case FailureKind::kInvalidInput: return kExitInvalidInput;
    case FailureKind::kUnsupported: return kExitUnsupported;
    case FailureKind::kUsage: return kExitUsage;
    case FailureKind::kMismatch: return kExitMismatch;
    case FailureKind::kCancelled: return kExitCancelled;
    case FailureKind::kInternal: return kExitInternal;
    case FailureKind::kGated: return kExitGated;
    case FailureKind::kRepoNotFound: return kExitRepoNotFound;
    case FailureKind::kEntryNotFound: return kExitEntryNotFound;
    case FailureKind::kNetwork: return kExitNetwork;
  }
  return kExitInternal;
}

inline int exit_code_for(ErrorCode code) { return exit_code_for(failure_kind(code)); }

}  // namespace memfit::cli
