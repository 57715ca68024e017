#include "torch_exec.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exit_codes.h"

namespace memfit::cli {

bool is_torch_subcommand(std::string_view arg) { return arg == "load" || arg == "forward" || arg == "generate"; }

int exec_torch(int argc, char** argv) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string path = ((ec ? std::filesystem::path(argv[0]) : self).parent_path() / "memfit-torch").string();
  if (::access(path.c_str(), X_OK) != 0) {
    fmt::print(stderr,
               "memfit: error: `memfit {}` needs memfit-torch, and this memfit was built without LibTorch "
               "(MEMFIT_WITH_TORCH=OFF; build the native-torch preset). Looked for {}\n",
               argv[1], path);
    return kExitNoTorch;
  }
  std::vector<char*> args;
  args.push_back(const_cast<char*>(path.c_str()));
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  ::execv(path.c_str(), args.data());
  fmt::print(stderr, "memfit: error: cannot run {}: {}\n", path, std::strerror(errno));
  return kExitInternal;
}

}  // namespace memfit::cli
