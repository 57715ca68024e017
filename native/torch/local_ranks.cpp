#include "local_ranks.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "failure.h"

extern char** environ;

namespace memfit::torchrt {

int free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  const bool ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  if (fd >= 0) ::close(fd);
  if (!ok) throw Failure{FailureKind::kNetwork, "--local-ranks: no free port on 127.0.0.1 for the rendezvous"};
  return ntohs(a.sin_port);
}

namespace {

// argv without --local-ranks (and its value), with this rank's options added.
std::vector<std::string> rank_argv(int argc, const char* const* argv, int ranks, int rank, int port) {
  std::vector<std::string> out{"/proc/self/exe"};
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--local-ranks") {
      ++i;
      continue;
    }
    if (a.rfind("--local-ranks=", 0) == 0) continue;
    out.emplace_back(a);
  }
  for (const std::string& s : {std::string("--nodes"), std::to_string(ranks), std::string("--rank"), std::to_string(rank),
                               std::string("--master"), fmt::format("127.0.0.1:{}", port)})
    out.push_back(s);
  return out;
}

pid_t spawn(std::vector<std::string> args, bool quiet) {
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (quiet) posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);  // only rank 0 prints
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw Failure{FailureKind::kInternal, fmt::format("--local-ranks: cannot start memfit-torch: error {}", rc)};
  return pid;
}

}  // namespace

bool RankOutcome::ended(int rank, int wait_status) {
  const bool first = named_ == 0 && killed_ == 0;
  if (WIFEXITED(wait_status)) {
    if (WEXITSTATUS(wait_status) == 0) return false;
    if (named_ == 0) named_ = WEXITSTATUS(wait_status);
    return first;
  }
  if (!WIFSIGNALED(wait_status)) return false;
  // Only the first: the others' SIGTERMs are this run's own stop.
  if (first) fmt::print(stderr, "memfit: error: rank {} was killed by signal {}\n", rank, WTERMSIG(wait_status));
  if (killed_ == 0) killed_ = 128 + WTERMSIG(wait_status);
  return first;
}

int run_local_ranks(int argc, const char* const* argv, int ranks) {
  const int port = free_local_port();
  std::vector<pid_t> pids;
  for (int r = 0; r < ranks; ++r) pids.push_back(spawn(rank_argv(argc, argv, ranks, r, port), r != 0));
  RankOutcome outcome;
  for (std::size_t running = pids.size(); running > 0; --running) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) break;
    int rank = 0;
    for (std::size_t i = 0; i < pids.size(); ++i)
      if (pids[i] == pid) rank = static_cast<int>(i), pids[i] = 0;
    if (!outcome.ended(rank, status)) continue;
    for (const pid_t other : pids)
      if (other > 0) ::kill(other, SIGTERM);  // the first failure ends the run; its message is already out
  }
  return outcome.exit_code();
}

}  // namespace memfit::torchrt
