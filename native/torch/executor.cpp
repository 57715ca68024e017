#include "executor.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <future>

#include <fmt/format.h>

#include "torch_types.h"

#ifdef MEMFIT_TORCH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace memfit::torchrt {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

bool is_contiguous_view(const at::Tensor& t) { return t.is_contiguous(); }

}  // namespace

#ifdef MEMFIT_TORCH_CUDA
struct Executor::CopyStream {
  explicit CopyStream(c10::DeviceIndex device) : stream(c10::cuda::getStreamFromPool(false, device)) {}
  c10::cuda::CUDAStream stream;
};
#else
struct Executor::CopyStream {};
#endif

struct Executor::Fetched {
  StageWeights weights;
  std::vector<const StoredWeight*> paged_in;  // disk weights whose pages to drop afterwards
  std::vector<at::Tensor> streamed;           // copies made on the copy stream (CUDA)
  std::uint64_t bytes = 0;
#ifdef MEMFIT_TORCH_CUDA
  std::unique_ptr<at::cuda::CUDAEvent> ready;  // recorded on the copy stream after the last copy
#endif
};

Executor::Executor(const LoadedModel& model, const ModelProgram& program, ExecOptions options)
    : model_(model), program_(program), options_(options) {
  if (options_.prefetch_depth < 1) options_.prefetch_depth = 1;
  if (options_.evict_page_cache)
    for (const auto& path : model_.plan.source.files) evict_fds_.push_back(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
#ifdef MEMFIT_TORCH_CUDA
  if (model_.exec_device.is_cuda()) copy_stream_ = std::make_unique<CopyStream>(model_.exec_device.index());
#endif
}

Executor::~Executor() {
  for (int fd : evict_fds_)
    if (fd >= 0) ::close(fd);
}

// Brings the weights of one stage to the execution device in the compute dtype. Runs on a
// background thread with prefetch; on a GPU, its copies go to the copy stream.
std::shared_ptr<Executor::Fetched> Executor::fetch(std::size_t stage) const {
  at::NoGradGuard no_grad;
  auto out = std::make_shared<Fetched>();
  const at::Device exec = model_.exec_device;
#ifdef MEMFIT_TORCH_CUDA
  std::optional<c10::cuda::CUDAStreamGuard> on_copy_stream;
  if (copy_stream_) on_copy_stream.emplace(copy_stream_->stream);
#endif
  for (const std::string& name : program_.stages()[stage].weights) {
    const StoredWeight* w = model_.find(name);
    if (!w) continue;  // missing (--allow-missing): the stage reports it by name if it needs it
    at::Tensor t = w->tensor;
    const bool floating = at::isFloatingType(t.scalar_type());
    if (w->on_disk()) {
      // Page in. The stored bytes are used in place when no conversion is needed (the very
      // bytes a resident zero-copy weight would use); else copied to memory aligned like the
      // source, then cast exactly as the loader casts resident weights.
      if (exec.is_cpu() && is_contiguous_view(t) && (!floating || t.scalar_type() == model_.dtype)) {
        populate(*w->mapping, w->offset, w->span);
      } else {
        t = aligned_copy(t);
        if (floating && t.scalar_type() != model_.dtype) t = t.to(model_.dtype);
      }
      out->paged_in.push_back(w);
      out->bytes += w->nbytes;
    }
    if (t.device() != exec) {
      if (exec.is_cuda() && t.is_cpu() && !t.is_pinned()) {
        auto pinned = at::empty(t.sizes(), t.options().pinned_memory(true));
        pinned.copy_(t);
        t = pinned;
      }
      t = t.to(t.options().device(exec), /*non_blocking=*/true);
      if (!w->on_disk()) out->bytes += w->nbytes;
      out->streamed.push_back(t);
    }
    if (floating && t.scalar_type() != options_.compute_dtype) t = t.to(options_.compute_dtype);
    out->weights.set(name, t);
  }
#ifdef MEMFIT_TORCH_CUDA
  if (copy_stream_) {
    out->ready = std::make_unique<at::cuda::CUDAEvent>();
    out->ready->record(copy_stream_->stream);
  }
#endif
  return out;
}

void Executor::release(Fetched& f) const {
  f.weights.clear();
  f.streamed.clear();
  for (const StoredWeight* w : f.paged_in) {
    w->mapping->advise_dontneed(w->offset, w->span);  // never written: safe on MAP_PRIVATE
    if (!evict_fds_.empty()) {
      std::size_t i = 0;
      while (i < model_.plan.source.files.size() && model_.plan.source.files[i] != w->mapping->path()) ++i;
      if (i < evict_fds_.size() && evict_fds_[i] >= 0)
        ::posix_fadvise(evict_fds_[i], static_cast<off_t>(w->offset), static_cast<off_t>(w->span),
                        POSIX_FADV_DONTNEED);
    }
  }
}

at::Tensor Executor::forward(const at::Tensor& input_ids, ForwardState* state) {
  at::NoGradGuard no_grad;
  const auto t0 = Clock::now();
  ForwardState local;
  ForwardState& s = state ? *state : local;
  s.input_ids = input_ids.to(at::TensorOptions().dtype(at::kLong).device(model_.exec_device));
  if (s.use_cache && s.keys.empty()) {
    s.keys.resize(static_cast<std::size_t>(program_.layers()));
    s.values.resize(static_cast<std::size_t>(program_.layers()));
  }
  const std::size_t n = program_.stages().size();
  const std::size_t depth = options_.prefetch ? static_cast<std::size_t>(options_.prefetch_depth) : 0;
  std::deque<std::future<std::shared_ptr<Fetched>>> ahead;  // stages next .. next + size - 1
  std::size_t next = 0;  // first stage not yet scheduled
  for (std::size_t k = 0; k < n; ++k) {
    std::shared_ptr<Fetched> f;
    const auto w0 = Clock::now();
    if (depth == 0) {
      f = fetch(k);
    } else {
      while (next <= k + depth && next < n) {
        const std::size_t stage = next++;
        ahead.push_back(std::async(std::launch::async, [this, stage] { return fetch(stage); }));
      }
      f = ahead.front().get();
      ahead.pop_front();
    }
#ifdef MEMFIT_TORCH_CUDA
    if (f->ready) {
      const auto compute = at::cuda::getCurrentCUDAStream(model_.exec_device.index());
      f->ready->block(compute);  // the compute stream waits for the copies, the CPU does not
      for (const auto& t : f->streamed)
        c10::cuda::CUDACachingAllocator::recordStream(t.storage().data_ptr(), compute);
    }
#endif
    stats_.wait_seconds += since(w0);
    stats_.streamed_bytes += f->bytes;
    program_.run(k, f->weights, s);
    release(*f);
  }
  if (s.use_cache) s.past += s.input_ids.size(1);
  at::Tensor logits = s.logits.to(at::kCPU);
  s.logits = at::Tensor();
  stats_.seconds = since(t0);
  return logits;
}

std::vector<std::int64_t> Executor::generate(const std::vector<std::int64_t>& prompt, int new_tokens) {
  ForwardState s;
  s.use_cache = true;
  std::vector<std::int64_t> out;
  at::Tensor ids = at::tensor(prompt, at::TensorOptions().dtype(at::kLong)).view({1, -1});
  for (int i = 0; i < new_tokens; ++i) {
    const at::Tensor logits = forward(ids, &s);
    const std::int64_t next = logits.select(1, logits.size(1) - 1).argmax(-1).item<std::int64_t>();
    out.push_back(next);
    ids = at::tensor(std::vector<std::int64_t>{next}, at::TensorOptions().dtype(at::kLong)).view({1, 1});
  }
  return out;
}

void OffloadHook::pre_forward() {
  if (previous_ && previous_->on_device()) previous_->offload();
  if (view_) return;
  at::NoGradGuard no_grad;
  view_ = std::make_unique<LoadedModel>();
  view_->plan = model_.plan;
  view_->dtype = model_.dtype;
  view_->exec_device = model_.exec_device;
  const plan::Device exec = model_.exec_device.is_cuda()
                                ? plan::Device::gpu(model_.exec_device.index())
                                : plan::Device::cpu();
  for (const auto& w : model_.weights) {
    StoredWeight r = w;
    at::Tensor t = w.tensor;
    if (w.on_disk()) {
      t = aligned_copy(t);
      if (at::isFloatingType(t.scalar_type()) && t.scalar_type() != model_.dtype) t = t.to(model_.dtype);
    }
    r.tensor = t.to(model_.exec_device);
    r.device = exec;
    resident_.push_back(r.tensor);
    view_->weights.push_back(std::move(r));
  }
  view_->index();
}

void OffloadHook::offload() {
  view_.reset();
  resident_.clear();
}

const LoadedModel& OffloadHook::resident_model() const {
  if (!view_) throw std::logic_error("OffloadHook::resident_model() before pre_forward()");
  return *view_;
}

}  // namespace memfit::torchrt
