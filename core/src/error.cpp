#include "memfit/error.h"

namespace memfit {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidJson: return "invalid_json";
    case ErrorCode::kMissingKey: return "missing_key";
    case ErrorCode::kWrongType: return "wrong_type";
    case ErrorCode::kInvalidValue: return "invalid_value";
    case ErrorCode::kOverflow: return "overflow";
    case ErrorCode::kUnknownModelType: return "unknown_model_type";
    case ErrorCode::kUnknownClass: return "unknown_class";
    case ErrorCode::kUnsupportedLibrary: return "unsupported_library";
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kInternal: return "internal";
  }
  return "internal";
}

}  // namespace memfit
