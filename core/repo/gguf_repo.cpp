// A stub until this kind lands (issue 18): the kind is detected but not yet answered.
#include "kinds.h"
#include "memfit/error.h"

namespace memfit::repo {

std::vector<FileNeed> gguf_needs(const RepoFiles&) { return {}; }

RepoReport gguf_report(const RepoFiles&, const RepoOptions&) {
  throw Error(ErrorCode::kUnsupportedLibrary, "gguf repos are not answered yet");
}

}  // namespace memfit::repo
