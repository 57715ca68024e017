// Declarations of every family accessor (definitions: one per file in this folder).
#pragma once

#include "memfit/model/arch.h"

namespace memfit::arch {
#define MEMFIT_FAMILY(fn) const Family& fn();
#include "families.def"
#undef MEMFIT_FAMILY
}  // namespace memfit::arch
