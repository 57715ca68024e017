#include "failure.h"

namespace memfit {

FailureKind failure_kind(ErrorCode code) {
  switch (code) {
    case ErrorCode::kUnknownModelType:
    case ErrorCode::kUnknownClass:
    case ErrorCode::kUnsupportedLibrary:
    case ErrorCode::kZipUnsupportedCompression:
    case ErrorCode::kZipEncrypted:
    case ErrorCode::kZipMultiDisk:
    case ErrorCode::kTorchBinNotZip:
    case ErrorCode::kTorchBinUnsupportedDtype:
    case ErrorCode::kPickleUnsupportedProtocol:
    case ErrorCode::kGgufUnsupportedVersion:
    case ErrorCode::kGgufRemovedType: return FailureKind::kUnsupported;
    case ErrorCode::kSentencePieceUnsupported: return FailureKind::kUnsupported;
    case ErrorCode::kInvalidArgument: return FailureKind::kUsage;
    case ErrorCode::kInternal: return FailureKind::kInternal;
    default: return FailureKind::kInvalidInput;  // config, safetensors, index, zip and pickle errors
  }
}

}  // namespace memfit
