#include "process_group.h"

#include <algorithm>
#include <deque>
#include <utility>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#if defined(MEMFIT_TORCH_CUDA) && defined(USE_C10D_NCCL)
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#define MEMFIT_TORCH_NCCL 1
#endif

#include "failure.h"

namespace memfit::torchrt {
namespace {

using Clock = std::chrono::steady_clock;

std::string key(const std::string& what, int rank) { return fmt::format("memfit/{}/{}", what, rank); }

std::vector<std::uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string text(const std::vector<std::uint8_t>& b) { return {b.begin(), b.end()}; }

bool is_loopback(const std::string& host) { return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1"; }

// The message of a c10 error without its C++ backtrace.
std::string message_of(const std::exception& e) {
  if (const auto* c = dynamic_cast<const c10::Error*>(&e)) return c->what_without_backtrace();
  return e.what();
}

}  // namespace

// The concrete groups, not a base class: LibTorch 1.13's derive from ProcessGroup, 2.x's from
// Backend; both have the same send/recv.
struct ProcessGroupLink::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
#ifdef MEMFIT_TORCH_NCCL
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl;
#endif
  template <typename Fn>
  auto with_group(Fn&& fn) -> decltype(fn(*gloo)) {
#ifdef MEMFIT_TORCH_NCCL
    if (nccl) return fn(*nccl);
#endif
    return fn(*gloo);
  }
  // A posted send: its work, the tensor it reads (kept alive until it completes), for errors.
  using WorkPtr = decltype(std::declval<c10d::ProcessGroupGloo&>().send(std::declval<std::vector<at::Tensor>&>(), 0, 0));
  struct PendingSend {
    WorkPtr work;
    std::vector<at::Tensor> tensors;
    int to;
    const char* what;
  };
  std::deque<PendingSend> sends;
};

ProcessGroupLink::ProcessGroupLink(GroupOptions options) : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
#ifndef MEMFIT_TORCH_NCCL
  if (options_.backend == "nccl")
    throw Failure{FailureKind::kUnsupported, "--backend nccl: this LibTorch has no NCCL (a CUDA build has); use gloo"};
#endif
  if (options_.backend != "gloo" && options_.backend != "nccl")
    throw Failure{FailureKind::kUsage, fmt::format("--backend: '{}' is not gloo or nccl", options_.backend)};
  c10d::TCPStoreOptions o;
  o.port = static_cast<std::uint16_t>(options_.port);
  o.isServer = options_.rank == 0;
  o.waitWorkers = false;  // check_same() waits, naming who is missing
  o.timeout = options_.timeout;
  try {
    impl_->store = c10::make_intrusive<c10d::TCPStore>(options_.host, o);
  } catch (const std::exception& e) {
    throw Failure{FailureKind::kNetwork,
                  options_.rank == 0
                      ? fmt::format("rank 0: cannot listen at {}:{} for the other ranks: {}", options_.host,
                                    options_.port, message_of(e))
                      : fmt::format("rank {}: cannot reach the master {}:{} (rank 0) within {} s: {}", options_.rank,
                                    options_.host, options_.port, options_.timeout.count(), message_of(e))};
  }
}

ProcessGroupLink::~ProcessGroupLink() = default;

bool ProcessGroupLink::uses_cuda() const { return options_.backend == "nccl"; }

void ProcessGroupLink::arrive(const std::string& name) { impl_->store->set(key(name, options_.rank), bytes("1")); }

int ProcessGroupLink::first_failed_other() {
  for (int r = 0; r < options_.size; ++r)
    if (r != options_.rank && impl_->store->check({key("failed", r)})) return r;
  return -1;
}

void ProcessGroupLink::barrier(const std::string& name, std::chrono::seconds timeout, bool watch_failures) {
  const int me = options_.rank;
  try {
    arrive(name);
    const auto deadline = Clock::now() + timeout;
    std::vector<int> missing;
    for (int r = 0; r < options_.size; ++r) missing.push_back(r);
    // The store has no wait that also watches for failures: poll both, briefly. Failures are read
    // before arrivals: a rank that failed after passing `name` (one refusing a mismatch after
    // "join") has passed it, and this wait ends as passed — what this rank meets next names the
    // failure — rather than as that rank's failure, which would race with this rank's own check.
    while (true) {
      const int failed = watch_failures ? first_failed_other() : -1;
      missing.erase(std::remove_if(missing.begin(), missing.end(),
                                   [&](int r) { return impl_->store->check({key(name, r)}); }),
                    missing.end());
      if (missing.empty()) return;
      if (failed >= 0) {
        const std::string why = text(impl_->store->get(key("failed", failed)));
        arrive("failure-seen");  // rank 0 may leave now
        throw Failure{FailureKind::kNetwork, fmt::format("rank {}: stopped because another rank failed — {}", me, why)};
      }
      if (Clock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    throw Failure{FailureKind::kNetwork,
                  fmt::format("rank {}: rank{} {} did not {} within {} s (master {}:{})", me, missing.size() == 1 ? "" : "s",
                              fmt::join(missing, ", "), name == "join" ? "join" : "reach '" + name + "'",
                              timeout.count(), options_.host, options_.port)};
  } catch (const Failure&) {
    throw;
  } catch (const std::exception& e) {
    throw Failure{FailureKind::kNetwork, fmt::format("rank {}: lost the master {}:{} (rank 0) while waiting for '{}': {}",
                                                     me, options_.host, options_.port, name, message_of(e))};
  }
}

void ProcessGroupLink::check_same(const Fingerprint& mine) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [k, v] : mine) j[k] = v;
  impl_->store->set(key("fingerprint", options_.rank), bytes(j.dump()));
  barrier("join", options_.timeout);
  std::string refused;
  for (int r = 0; r < options_.size && refused.empty(); ++r) {
    if (r == options_.rank) continue;
    const auto theirs = nlohmann::ordered_json::parse(text(impl_->store->get(key("fingerprint", r))));
    for (const auto& [k, v] : mine) {
      const std::string other = theirs.value(k, std::string("(none)"));
      if (other == v) continue;
      refused = fmt::format("rank {}: rank {} runs a different {}: '{}' there, '{}' here — every rank needs the same "
                            "checkpoint, config, stages, dtype and generation options",
                            options_.rank, r, k, other, v);
      break;
    }
  }
  // Rank 0 holds the store: it leaves only once every rank has read the fingerprints.
  if (options_.rank == 0) barrier("compared", options_.timeout, /*watch_failures=*/false);
  else arrive("compared");
  if (!refused.empty()) throw Failure{FailureKind::kMismatch, refused};
}

void ProcessGroupLink::connect() {
  const auto prefixed = c10::make_intrusive<c10d::PrefixStore>("memfit/pg", impl_->store);
  try {
#ifdef MEMFIT_TORCH_NCCL
    if (options_.backend == "nccl") {
      auto o = c10d::ProcessGroupNCCL::Options::create();
      o->timeout = options_.timeout;
      impl_->nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(prefixed, options_.rank, options_.size, o);
      return;
    }
#endif
    auto o = c10d::ProcessGroupGloo::Options::create(options_.timeout);
    // The interface the master is reached on: loopback for a local run, else this host's address
    // (GLOO_SOCKET_IFNAME picks an interface, as torch.distributed reads it).
    if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"))
      o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
    else if (is_loopback(options_.host))
      o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    else
      o->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    o->threads = 2;
    impl_->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, options_.rank, options_.size, o);
  } catch (const std::exception& e) {
    throw Failure{FailureKind::kNetwork, fmt::format("rank {}: the process group ({}) did not connect within {} s: {}",
                                                     options_.rank, options_.backend, options_.timeout.count(),
                                                     message_of(e))};
  }
}

void ProcessGroupLink::lost(int peer, bool sending, const char* what, const std::exception& e) {
  const std::string m = message_of(e);
  const bool timed_out = m.find("imed out") != std::string::npos || m.find("imeout") != std::string::npos;
  const std::string doing = sending ? fmt::format("sending it the {}", what) : fmt::format("waiting for its {}", what);
  std::string msg = timed_out ? fmt::format("rank {}: rank {} did not answer within {} s ({})", options_.rank, peer,
                                            options_.timeout.count(), doing)
                              : fmt::format("rank {}: lost rank {} ({}): {}", options_.rank, peer, doing, m);
  const std::string others = failures_of_others();
  if (!others.empty()) msg += "; " + others;
  throw Failure{FailureKind::kNetwork, msg};
}

void ProcessGroupLink::complete(int peer, bool sending, const char* what, const std::function<bool()>& op) {
  try {
    if (!op()) throw std::runtime_error("Timed out");
  } catch (const Failure&) {
    throw;
  } catch (const std::exception& e) {
    lost(peer, sending, what, e);
  }
}

void ProcessGroupLink::send(const at::Tensor& t, int to, const char* what) {
  reap_sends(false);
  Impl::PendingSend p{{}, {uses_cuda() ? t.to(device_).contiguous() : t.to(at::kCPU).contiguous()}, to, what};
  complete(to, true, what, [&] {
    p.work = impl_->with_group([&](auto& g) { return g.send(p.tensors, to, 0); });
    return true;
  });
  ++stats_.messages_sent;
  stats_.bytes_sent += p.tensors[0].nbytes();
  impl_->sends.push_back(std::move(p));
}

void ProcessGroupLink::reap_sends(bool wait) {
  const auto t0 = Clock::now();
  while (!impl_->sends.empty()) {
    Impl::PendingSend& p = impl_->sends.front();
    if (!wait && !p.work->isCompleted()) break;
    complete(p.to, true, p.what, [&] { return p.work->wait(options_.timeout); });  // rethrows its failure
    impl_->sends.pop_front();
  }
  stats_.send_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
}

void ProcessGroupLink::flush_sends() { reap_sends(true); }

at::Tensor ProcessGroupLink::recv(at::IntArrayRef sizes, at::ScalarType dtype, int from, const char* what) {
  auto options = at::TensorOptions().dtype(dtype);
  if (uses_cuda()) options = options.device(device_);
  std::vector<at::Tensor> v{at::empty(sizes, options)};
  const auto t0 = Clock::now();
  complete(from, false, what, [&] {
    return impl_->with_group([&](auto& g) { return g.recv(v, from, 0)->wait(options_.timeout); });
  });
  stats_.recv_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
  return v[0];
}

void ProcessGroupLink::put(const std::string& name, const std::string& value) {
  impl_->store->set(key(name, options_.rank), bytes(value));
}

std::string ProcessGroupLink::get(const std::string& name, int rank) {
  return impl_->store->check({key(name, rank)}) ? text(impl_->store->get(key(name, rank))) : std::string();
}

void ProcessGroupLink::report_failure(const std::string& message) noexcept {
  try {
    impl_->store->set(key("failed", options_.rank), bytes(message));
  } catch (...) {  // the store (rank 0) is gone: the others find out from their own waits
  }
}

void ProcessGroupLink::let_others_read_failures(std::chrono::seconds limit) noexcept {
  try {
    const auto deadline = Clock::now() + limit;
    auto waiting = [&] {
      for (int r = 0; r < options_.size; ++r)
        if (r != options_.rank && impl_->store->check({key("join", r)}) &&
            !impl_->store->check({key("failure-seen", r)}) && !impl_->store->check({key("failed", r)}))
          return true;
      return false;
    };
    while (waiting() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } catch (...) {
  }
}

std::string ProcessGroupLink::failures_of_others() noexcept {
  std::vector<std::string> out;
  try {
    for (int r = 0; r < options_.size; ++r)
      if (r != options_.rank && impl_->store->check({key("failed", r)}))
        out.push_back(text(impl_->store->get(key("failed", r))));
  } catch (...) {
  }
  return fmt::format("{}", fmt::join(out, "; "));
}

}  // namespace memfit::torchrt
