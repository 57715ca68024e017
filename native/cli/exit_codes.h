// native/exit_codes.h — one process exit code per kind of failure, so scripts can branch.
#pragma once

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

inline int exit_code_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidJson:
    case ErrorCode::kMissingKey:
    case ErrorCode::kWrongType:
    case ErrorCode::kInvalidValue:
    case ErrorCode::kOverflow: return kExitInvalidInput;
    case ErrorCode::kUnknownModelType:
    case ErrorCode::kUnknownClass:
    case ErrorCode::kUnsupportedLibrary:
    // .bin checkpoints memfit cannot read in place (valid files, unsupported features)
    case ErrorCode::kZipUnsupportedCompression:
    case ErrorCode::kZipEncrypted:
    case ErrorCode::kZipMultiDisk:
    case ErrorCode::kTorchBinNotZip:
    case ErrorCode::kTorchBinUnsupportedDtype:
    case ErrorCode::kPickleUnsupportedProtocol: return kExitUnsupported;
    case ErrorCode::kInvalidArgument: return kExitUsage;
    case ErrorCode::kInternal: return kExitInternal;
    default: return kExitInvalidInput;  // safetensors and index format errors
  }
  return kExitInternal;
}

}  // namespace memfit::cli
