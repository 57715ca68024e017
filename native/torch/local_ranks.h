// native/torch/local_ranks.h — `memfit generate … --local-ranks N`: starts N ranks of a pipeline on
// this machine, like torchrun — memfit-torch again, with --nodes N --rank r --master
// 127.0.0.1:<a free port> — and waits for them. Rank 0's output is the command's; the first rank
// that fails stops the others, and its exit code is the command's (its message is on stderr) —
// unless it was killed by a signal and another rank then names a failure (RankOutcome).
#pragma once

namespace memfit::torchrt {

// The exit code of a run of ranks, from how each ended (waitpid statuses, in the order they came).
// The first failure stops the others. The command's exit code is the first named failure (an
// exit code other than 0); a rank killed by a signal — a crash, or the stop that follows a
// failure — counts only while no rank has named one: rank 0 leaving with a usage error can kill a
// rank that is still connecting to it a moment before rank 0's own exit is seen.
class RankOutcome {
 public:
  // How `rank` ended. True when it is the run's first failure: stop the others.
  bool ended(int rank, int wait_status);
  int exit_code() const { return named_ != 0 ? named_ : killed_; }

 private:
  int named_ = 0;   // the first exit code other than 0
  int killed_ = 0;  // 128 + the signal of the first rank killed
};

// A port nothing listens on now on 127.0.0.1: bound to port 0, read back, released for a rank to
// take (torchrun's way; another program could take it in between, and rank 0 then says so).
// Throws Failure(kNetwork) when there is none.
int free_local_port();

// argv as main() got it (with --local-ranks N somewhere in it). Returns the exit code.
int run_local_ranks(int argc, const char* const* argv, int ranks);

}  // namespace memfit::torchrt
