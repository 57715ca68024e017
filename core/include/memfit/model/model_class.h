// memfit/model/model_class.h — which class of a family gets built.
#pragma once

#include <string>
#include <vector>

#include "memfit/memory/estimate.h"
#include "memfit/model/arch.h"
#include "memfit/model/config.h"

namespace memfit {

// accelerate: AutoModel's class unless auto_map has an AutoModelFor* key (then the first one).
// memfit: --class if given, else architectures[0] when the family builds it, else the base.
// Notes explain any fallback.
std::string select_class(const Family& family, const Config& config, Mode mode,
                         const std::string& class_override, std::vector<std::string>* notes);

}  // namespace memfit
