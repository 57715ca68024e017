// A stub until this kind lands (issue 18): the kind is detected but not yet answered.
#include "kinds.h"
#include "memfit/error.h"

namespace memfit::repo {

std::vector<FileNeed> diffusers_needs(const RepoFiles&) { return {}; }

RepoReport diffusers_report(const RepoFiles&, const RepoOptions&) {
  throw Error(ErrorCode::kUnsupportedLibrary, "diffusers repos are not answered yet");
}

}  // namespace memfit::repo
