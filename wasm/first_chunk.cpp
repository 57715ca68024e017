// memfit.wasm's family table: the first_chunk.def families instead of all of families.def.
//
// core's own table (core/model/arch/family_list.cpp) defines only families(); this object file
// defines the same function and is given to the linker before core's archive, so that archive
// member is never pulled in — and with it no reference to the other families' files, which the
// linker then leaves out. memfit-all.wasm links core's table as it is.
#include "../core/model/arch/families.h"
#include "memfit/model/arch.h"

namespace memfit {

const std::vector<const Family*>& families() {
  static const std::vector<const Family*> kFirst = {
#define MEMFIT_FAMILY(fn) &arch::fn(),
#include "first_chunk.def"
#undef MEMFIT_FAMILY
  };
  return kFirst;
}

}  // namespace memfit

// Plans over several hosts (api_pipeline.cpp) are left out of the first module as well: this
// definition comes first, so that archive member — and the pipeline planner it pulls in — is never
// linked. The worker asks memfit-all.wasm again on this code (web/js/worker.js).
#include "../core/api/api_plan_request.h"

namespace memfit::api {

Json pipeline_plan(const Json&) {
  throw Error(ErrorCode::kNotInThisModule, "plans over several hosts are in memfit-all.wasm");
}

}  // namespace memfit::api

// Hub repos that are not one model (api_repo.cpp: GGUF, diffusers, sentence-transformers, PEFT)
// are in memfit-all.wasm only; the worker asks it again on this code.
#include "memfit/api/api.h"

namespace memfit::api {

std::string repo(const std::string&) {
  return error_reply(Error(ErrorCode::kNotInThisModule, "repos of other kinds are in memfit-all.wasm"));
}

}  // namespace memfit::api
