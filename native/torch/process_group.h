// native/torch/process_group.h — the ranks of a pipeline on LibTorch's c10d (style.md 16: the
// engine's primitives, not our own sockets): a TCPStore for the rendezvous — rank 0 listens at
// --master, the others connect — and a process group for tensors: ProcessGroupGloo over TCP (CPU
// tensors), or ProcessGroupNCCL (CUDA tensors) where this LibTorch was built with it.
//
// Every wait is bounded: a rank that never joins, dies or stops answering becomes a Failure that
// names it (kNetwork) within the timeout, never a hang. A rank that fails tells the others through
// the store (best effort: the store lives in rank 0), so their errors can name the cause.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

namespace memfit::torchrt {

struct GroupOptions {
  int rank = 0, size = 1;
  std::string host;  // the master: rank 0's address
  int port = 0;
  std::chrono::seconds timeout{60};
  std::string backend = "gloo";  // "nccl" where compiled in (MEMFIT_TORCH_CUDA + USE_C10D_NCCL)
};

// What this rank's point-to-point traffic cost: seconds inside recv waits (which include the
// sender's compute before the message left) and inside waits for sends to complete; messages
// and bytes sent.
struct LinkStats {
  double recv_seconds = 0, send_seconds = 0;
  std::uint64_t messages_sent = 0, bytes_sent = 0;
};

// What a rank describes itself by at the rendezvous (name, value), compared field by field.
using Fingerprint = std::vector<std::pair<std::string, std::string>>;

class ProcessGroupLink {
 public:
  // Connects to the store (rank 0 starts it). Throws Failure(kNetwork) naming the master when it
  // cannot be reached (or, on rank 0, listened on) within the timeout.
  explicit ProcessGroupLink(GroupOptions options);
  ~ProcessGroupLink();
  ProcessGroupLink(const ProcessGroupLink&) = delete;
  ProcessGroupLink& operator=(const ProcessGroupLink&) = delete;

  int rank() const { return options_.rank; }
  int size() const { return options_.size; }
  bool uses_cuda() const;  // tensors travel on the GPU (NCCL)
  void set_device(at::Device d) { device_ = d; }  // NCCL: where received tensors go (the rank's GPU)

  // Publishes this rank's fingerprint, waits for every rank's and refuses (Failure kMismatch) the
  // first field that differs from this rank's, naming the rank and both values.
  void check_same(const Fingerprint& mine);
  // Waits until every rank has passed `name`; names the ranks that did not within `timeout`.
  // Watching failures, a failure another rank recorded ends the wait at once, with its message —
  // unless every rank has passed `name` (the failure came after; the next wait meets it).
  void barrier(const std::string& name, std::chrono::seconds timeout, bool watch_failures = true);
  // Marks `name` passed without waiting (a rank about to exit: the store may go with rank 0).
  void arrive(const std::string& name);
  // Creates the process group (after check_same: only ranks that agree connect).
  void connect();

  // Point-to-point, tag 0, in order. `what` says what is awaited in errors ("hidden states").
  // A send is posted and returns: ranks that pass messages round a ring (the last rank sends ids
  // back to rank 0) would deadlock if each waited for its send while its receiver waits to send
  // too. Its completion is checked at the next send and awaited by flush_sends().
  void send(const at::Tensor& t, int to, const char* what);
  at::Tensor recv(at::IntArrayRef sizes, at::ScalarType dtype, int from, const char* what);
  void flush_sends();  // waits (bounded) for every posted send
  const LinkStats& stats() const { return stats_; }

  // A value for the other ranks in the store (`name` of this rank), and another rank's.
  void put(const std::string& name, const std::string& value);
  std::string get(const std::string& name, int rank);

  // Records this rank's failure in the store for the others (ignored when the store is gone).
  void report_failure(const std::string& message) noexcept;
  // Rank 0, failing while others wait on the store it holds: keeps it up until each rank that
  // joined has seen a recorded failure (or failed itself), at most `limit` — so their errors say
  // why rather than "lost the master".
  void let_others_read_failures(std::chrono::seconds limit) noexcept;
  // Other ranks' recorded failures, "rank R: message" lines ("" when none or the store is gone).
  std::string failures_of_others() noexcept;

 private:
  int first_failed_other();  // the lowest other rank that recorded a failure, or -1
  struct Impl;
  // Runs one send/recv `op` (false: timed out); a failure becomes a Failure naming `peer`.
  void complete(int peer, bool sending, const char* what, const std::function<bool()>& op);
  [[noreturn]] void lost(int peer, bool sending, const char* what, const std::exception& e);
  void reap_sends(bool wait);  // drops completed sends (all, waiting, when `wait`)
  GroupOptions options_;
  LinkStats stats_;
  at::Device device_{at::kCPU};
  std::unique_ptr<Impl> impl_;
};

}  // namespace memfit::torchrt
