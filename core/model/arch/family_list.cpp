// The one table of architecture families. Adding a family = one file in core/model/arch/ + one line
// in families.def. Alone in its file: the page's first WebAssembly module links a shorter table
// in its place (wasm/first_chunk.cpp), which works only while nothing else lives here.
#include "families.h"
#include "memfit/model/arch.h"

namespace memfit {

const std::vector<const Family*>& families() {
  static const std::vector<const Family*> kAll = {
#define MEMFIT_FAMILY(fn) &arch::fn(),
#include "families.def"
#undef MEMFIT_FAMILY
  };
  return kAll;
}

}  // namespace memfit
