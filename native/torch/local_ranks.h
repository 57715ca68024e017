// native/torch/local_ranks.h — `memfit generate … --local-ranks N`: starts N ranks of a pipeline on
// this machine, like torchrun — memfit-torch again, with --nodes N --rank r --master
// 127.0.0.1:<a free port> — and waits for them. Rank 0's output is the command's; the first rank
// that fails stops the others, and its exit code is the command's (its message is on stderr).
#pragma once

namespace memfit::torchrt {

// A port nothing listens on now on 127.0.0.1: bound to port 0, read back, released for a rank to
// take (torchrun's way; another program could take it in between, and rank 0 then says so).
// Throws Failure(kNetwork) when there is none.
int free_local_port();

// argv as main() got it (with --local-ranks N somewhere in it). Returns the exit code.
int run_local_ranks(int argc, const char* const* argv, int ranks);

}  // namespace memfit::torchrt
