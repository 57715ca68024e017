// memfit-torch — `memfit load` and `memfit forward` on LibTorch. A separate executable so that
// `memfit estimate` never links or loads LibTorch (286 shared libraries, slow to load); `memfit`
// execs this program from its own folder for these two subcommands.
#include <exception>
#include <string>

#include <c10/util/Exception.h>
#include <fmt/format.h>

#include "failure.h"
#include "local_ranks.h"
#include "torch_args.h"
#include "torch_commands.h"
#include "uncaught.h"

namespace {

using memfit::FailureKind;

// memfit-torch's exit codes: memfit's (README "Exit codes"), for the failures a load or a forward
// can have.
constexpr struct {
  FailureKind kind;
  int exit_code;
} kExitCodes[] = {
    {FailureKind::kUsage, 2},    {FailureKind::kInvalidInput, 3}, {FailureKind::kUnsupported, 4},
    {FailureKind::kFile, 10},    {FailureKind::kMismatch, 11},    {FailureKind::kCancelled, 21},
    {FailureKind::kGated, 5},    {FailureKind::kRepoNotFound, 6}, {FailureKind::kEntryNotFound, 7},
    {FailureKind::kNetwork, 9},  {FailureKind::kInternal, 1},
};

int exit_code(FailureKind kind) {
  for (const auto& e : kExitCodes)
    if (e.kind == kind) return e.exit_code;
  return 1;
}

int fail(FailureKind kind, const std::string& message) {
  fmt::print(stderr, "memfit: error: {}\n", message);
  return exit_code(kind);
}

// Runs a command; its failure becomes one line on stderr and the exit code of its kind.
template <typename Fn>
int guarded(Fn&& fn) {
  try {
    fn();
    return 0;
  } catch (const memfit::Failure& e) {
    return fail(e.kind, e.message);
  } catch (const memfit::Error& e) {
    return fail(memfit::failure_kind(e.code()), e.message());
  } catch (const c10::Error& e) {
    // ATen's own message, without the C++ backtrace what() appends: a user reads the first line.
    return fail(FailureKind::kInternal, e.what_without_backtrace());
  } catch (const std::exception& e) {
    return fail(FailureKind::kInternal, e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  using memfit::torchrt::TorchCommand;
  const int network = exit_code(FailureKind::kNetwork), internal = exit_code(FailureKind::kInternal);
  memfit::torchrt::name_uncaught_exceptions("", network, internal);
  TorchCommand command;
  const int parsed = guarded([&] { command = memfit::torchrt::parse_torch_command(argc, argv); });
  if (parsed != 0) return parsed;
  if (command.kind == TorchCommand::Kind::kGenerate && command.generate.pipeline.nodes > 0 &&
      command.generate.pipeline.local_ranks == 0)
    memfit::torchrt::name_uncaught_exceptions(fmt::format("rank {}: ", command.generate.pipeline.rank), network, internal);
  switch (command.kind) {
    case TorchCommand::Kind::kLoad: return guarded([&] { memfit::torchrt::run_load(command.load); });
    case TorchCommand::Kind::kForward: return guarded([&] { memfit::torchrt::run_forward(command.forward); });
    case TorchCommand::Kind::kGenerate:
      if (command.generate.pipeline.local_ranks > 0) {
        int code = 0;
        const int started = guarded([&] { code = memfit::torchrt::run_local_ranks(argc, argv, command.generate.pipeline.local_ranks); });
        return started != 0 ? started : code;
      }
      return guarded([&] { memfit::torchrt::run_generate(command.generate); });
    case TorchCommand::Kind::kHelp: fmt::print("{}", command.help); return 0;
  }
  return exit_code(FailureKind::kInternal);
}
