// native/cli/torch_exec.h — `memfit load|forward` are served by memfit-torch, a separate executable
// next to `memfit` (built with MEMFIT_WITH_TORCH=ON), so `memfit estimate` never loads LibTorch.
#pragma once

#include <string_view>

namespace memfit::cli {

bool is_torch_subcommand(std::string_view arg);
// Replaces this process with <dir of memfit>/memfit-torch argv[1..]. Returns only on failure:
// kExitNoTorch with a one-line message when memfit-torch is absent (a build without LibTorch).
int exec_torch(int argc, char** argv);

}  // namespace memfit::cli
