// How a failing rank ends: local_ranks.h's RankOutcome (which exit a run of ranks reports) and
// uncaught.h (an exception nothing catches, e.g. from LibTorch's rendezvous store's background
// thread, becomes a named failure instead of SIGABRT).
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "local_ranks.h"
#include "uncaught.h"

namespace memfit::test {
namespace {

int exited(int code) { return W_EXITCODE(code, 0); }
int killed(int signal) { return signal; }  // a wait status of a process killed by `signal`

struct ChildEnd {
  int status = 0;
  std::string err;
};

// Runs `body` in a forked child whose stderr is captured; the child must not return.
template <typename Fn>
ChildEnd in_child(Fn body) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(fds[1], 2);
    ::close(fds[0]);
    body();
    ::_exit(100);  // body returned: the test fails on this code
  }
  ::close(fds[1]);
  ChildEnd end;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) end.err.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  ::waitpid(pid, &end.status, 0);
  return end;
}

}  // namespace

TEST_CASE("local ranks: the first failure stops the others; a named exit outranks a rank killed by a signal") {
  struct End {
    int rank, status;
    bool stops_the_others;
  };
  const struct {
    const char* what;
    std::vector<End> ends;
    int exit_code;
  } runs[] = {
      {"all succeed", {{1, exited(0), false}, {0, exited(0), false}}, 0},
      // rank 0 leaves with a usage error; rank 3, still connecting to it, is killed first
      {"a crash, then the named failure behind it",
       {{3, killed(SIGABRT), true}, {0, exited(2), false}, {1, killed(SIGTERM), false}}, 2},
      {"two named failures: the first is the run's", {{1, exited(9), true}, {0, exited(2), false}}, 9},
      {"only crashes: the first one's signal", {{2, killed(SIGSEGV), true}, {0, killed(SIGTERM), false}}, 128 + SIGSEGV},
  };
  for (const auto& run : runs) {
    CAPTURE(run.what);
    torchrt::RankOutcome o;
    for (const End& e : run.ends) {
      CAPTURE(e.rank);
      CHECK(o.ended(e.rank, e.status) == e.stops_the_others);
    }
    CHECK(o.exit_code() == run.exit_code);
  }
}

TEST_CASE("an exception that leaves a thread is a named failure, not SIGABRT") {
  const ChildEnd reset = in_child([] {
    torchrt::name_uncaught_exceptions("rank 2: ", 9, 1);
    std::thread([] { throw std::system_error(ECONNRESET, std::system_category(), "recv"); }).join();
  });
  CAPTURE(reset.err);
  REQUIRE(WIFEXITED(reset.status));
  CHECK(WEXITSTATUS(reset.status) == 9);
  CHECK(reset.err.rfind("memfit: error: rank 2: ", 0) == 0);
  CHECK(reset.err.find("Connection reset by peer") != std::string::npos);

  const ChildEnd other = in_child([] {
    torchrt::name_uncaught_exceptions("", 9, 1);
    std::thread([] { throw std::runtime_error("a bug"); }).join();
  });
  CAPTURE(other.err);
  REQUIRE(WIFEXITED(other.status));
  CHECK(WEXITSTATUS(other.status) == 1);
  CHECK(other.err.find("internal error") != std::string::npos);
  CHECK(other.err.find("a bug") != std::string::npos);
}

}  // namespace memfit::test
