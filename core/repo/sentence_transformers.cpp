// A stub until this kind lands (issue 18): the kind is detected but not yet answered.
#include "kinds.h"
#include "memfit/error.h"

namespace memfit::repo {

std::vector<FileNeed> sentence_transformers_needs(const RepoFiles&) { return {}; }

RepoReport sentence_transformers_report(const RepoFiles&, const RepoOptions&) {
  throw Error(ErrorCode::kUnsupportedLibrary, "sentence_transformers repos are not answered yet");
}

}  // namespace memfit::repo
