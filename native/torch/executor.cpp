#include "executor.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <future>
#include <thread>

#include <fmt/format.h>

#include "failure.h"
#include "generation.h"
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

// One stage read in flight for as long as it lives; keeps the peak (ExecStats::most_reads_at_once).
class InFlight {
 public:
  InFlight(std::atomic<std::size_t>& count, std::atomic<std::size_t>& peak) : count_(count) {
    const std::size_t now = ++count_;
    for (std::size_t seen = peak.load(); now > seen && !peak.compare_exchange_weak(seen, now);) {
    }
  }
  ~InFlight() { --count_; }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  std::atomic<std::size_t>& count_;
};

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
  at::Tensor staging;                 // the pooled buffer the stage's disk weights were read into
  const StagingLayout* layout = nullptr;
  std::vector<at::Tensor> streamed;   // copies made on the copy stream (CUDA)
  std::uint64_t bytes = 0;
  double read_seconds = 0;
#ifdef MEMFIT_TORCH_CUDA
  std::unique_ptr<at::cuda::CUDAEvent> ready;  // recorded on the copy stream after the last copy
#endif
};

Executor::Executor(const LoadedModel& model, const ModelProgram& program, ExecOptions options)
    : model_(model), program_(program), options_(options) {
  if (options_.prefetch_depth < 1) options_.prefetch_depth = 1;
  plan_staging();
#ifdef MEMFIT_TORCH_CUDA
  if (model_.exec_device.is_cuda()) copy_stream_ = std::make_unique<CopyStream>(model_.exec_device.index());
#endif
}

Executor::~Executor() { ahead_.clear(); }  // waits for reads in flight before their buffers go

// Lays out each stage's disk weights in a staging buffer and opens the files they live in (the
// shards, or an offload folder's .dat files) once.
void Executor::plan_staging() {
  std::vector<std::string> paths;
  auto file_index = [&](const std::string& path) {
    for (std::size_t i = 0; i < paths.size(); ++i)
      if (paths[i] == path) return i;
    files_.push_back(std::make_unique<io::FileReader>(path));
    files_.back()->advise_sequential();
    paths.push_back(path);
    return paths.size() - 1;
  };
  for (const StageSpec& stage : program_.stages()) {
    std::vector<DiskSpan> spans;
    std::vector<std::size_t> which;  // index in stage.weights of each span
    StageStaging st;
    st.gathered.assign(stage.weights.size(), 0);
    for (std::size_t i = 0; i < stage.weights.size(); ++i) {
      const StoredWeight* w = model_.find(stage.weights[i]);
      if (!w || !w->on_disk()) continue;
      const bool by_rows = std::find(stage.gathered.begin(), stage.gathered.end(), stage.weights[i]) !=
                               stage.gathered.end() &&
                           w->tensor.dim() >= 1 && w->tensor.is_contiguous();
      if (by_rows) {
        st.gathered[i] = 1;
        st.rows.push_back({w, file_index(w->mapping->path()), stage.weights[i]});
        continue;
      }
      spans.push_back({file_index(w->mapping->path()), w->offset, w->span});
      which.push_back(i);
    }
    st.layout = layout_staging(spans);
    st.offsets.assign(stage.weights.size(), 0);
    for (std::size_t j = 0; j < which.size(); ++j) st.offsets[which[j]] = st.layout.span_offsets[j];
    staging_bytes_ = std::max(staging_bytes_, st.layout.buffer_bytes);
    staging_.push_back(std::move(st));
  }
  stats_.staging_buffer_bytes = staging_bytes_;
}

// Buffers start on a 2 MiB boundary and ask for transparent huge pages: reads into 4 KiB pages
// pay a page fault per 4 KiB on their first pass, which page-cache hits cannot hide.
constexpr std::uint64_t kStagingBase = 2u << 20;

at::Tensor Executor::acquire_staging() const {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  for (const at::Tensor& b : pool_)
    if (b.use_count() == 1) return b;  // no view, no fetch holds it: the copy returned makes it busy
  const bool pinned = model_.exec_device.is_cuda();
  pool_.push_back(at::empty({static_cast<std::int64_t>(staging_bytes_ + kStagingBase)},
                            at::TensorOptions().dtype(at::kByte).pinned_memory(pinned)));
#ifdef MADV_HUGEPAGE
  if (!pinned) ::madvise(staged_base(pool_.back()), staging_bytes_, MADV_HUGEPAGE);  // a hint only
#endif
  return pool_.back();
}

std::uint8_t* Executor::staged_base(const at::Tensor& buffer) const {
  const auto p = reinterpret_cast<std::uintptr_t>(buffer.data_ptr());
  return reinterpret_cast<std::uint8_t*>((p + kStagingBase - 1) / kStagingBase * kStagingBase);
}

// Brings the weights of one stage to the execution device in the compute dtype. Runs on a
// background thread with prefetch; on a GPU, its copies go to the copy stream.
std::shared_ptr<Executor::Fetched> Executor::fetch(std::size_t stage) const {
  at::NoGradGuard no_grad;
  auto out = std::make_shared<Fetched>();
  const at::Device exec = model_.exec_device;
  const StageStaging& staging = staging_[stage];
  std::uint8_t* base = nullptr;
  if (!staging.layout.reads.empty()) {
    out->staging = acquire_staging();
    out->layout = &staging.layout;
    base = staged_base(out->staging);
    const auto r0 = Clock::now();
    const InFlight reading(reading_, most_reading_);
    for (const StagedRead& r : staging.layout.reads)
      files_[r.file]->read_into(r.file_offset, r.length, reinterpret_cast<char*>(base + r.buffer_offset));
    out->read_seconds = since(r0);
  }
#ifdef MEMFIT_TORCH_CUDA
  std::optional<c10::cuda::CUDAStreamGuard> on_copy_stream;
  if (copy_stream_) on_copy_stream.emplace(copy_stream_->stream);
#endif
  const auto& names = program_.stages()[stage].weights;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const StoredWeight* w = model_.find(names[i]);
    if (!w || staging.gathered[i]) continue;  // missing (--allow-missing: the stage names it if it
                                              // needs it), or read by rows in gather_rows()
    at::Tensor t = w->tensor;
    if (w->on_disk()) {
      // The stored bytes as read, aligned like the mapping; cast exactly as the loader casts
      // resident weights. The view keeps the buffer busy until the stage is done with it.
      t = cast_floating(at::from_blob(base + staging.offsets[i], t.sizes(), t.strides(),
                                      [keep = out->staging](void*) {}, t.options()),
                        model_.dtype);
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
    // Half weights a CPU computes in float32 stay as stored: a decoding step reads them once
    // (StageWeights::linear), instead of writing and reading a float32 copy per token.
    const bool keep_half = exec.is_cpu() && options_.compute_dtype == at::kFloat &&
                           (t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16);
    if (keep_half) out->weights.set_uncast(names[i], t, options_.compute_dtype);
    else out->weights.set(names[i], cast_floating(t, options_.compute_dtype));
  }
#ifdef MEMFIT_TORCH_CUDA
  if (copy_stream_) {
    out->ready = std::make_unique<at::cuda::CUDAEvent>();
    out->ready->record(copy_stream_->stream);
  }
#endif
  return out;
}

// The rows of the forward's input ids of a stage's gathered disk weights, read one by one (an
// embedding lookup needs T rows of the vocabulary, not all of it), cast like any streamed weight.
void Executor::gather_rows(std::size_t stage, const ForwardState& s, StageWeights& w) {
  const StageStaging& st = staging_[stage];
  if (st.rows.empty()) return;
  const at::Tensor ids = s.input_ids.to(at::kCPU).contiguous();
  const std::int64_t* id = ids.data_ptr<std::int64_t>();
  std::vector<std::int64_t> unique(id, id + ids.numel());
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  std::vector<std::int64_t> row_of(static_cast<std::size_t>(ids.numel()));
  for (std::size_t i = 0; i < row_of.size(); ++i)
    row_of[i] = std::lower_bound(unique.begin(), unique.end(), id[i]) - unique.begin();
  const at::Tensor row_of_id =
      at::tensor(row_of, at::TensorOptions().dtype(at::kLong)).view(ids.sizes()).to(model_.exec_device);
  const auto n = static_cast<std::int64_t>(unique.size());
  for (const StageStaging::Rows& r : st.rows) {
    const at::Tensor& t = r.weight->tensor;
    if (n > 0 && (unique.front() < 0 || unique.back() >= t.size(0)))
      throw Failure{FailureKind::kUsage,
                          fmt::format("token id {} is out of range for '{}' ({} rows)",
                                      unique.front() < 0 ? unique.front() : unique.back(), r.name, t.size(0))};
    const auto row_bytes = static_cast<std::uint64_t>(t.stride(0) * t.element_size());
    std::vector<std::int64_t> sizes = t.sizes().vec();
    sizes[0] = n;
    at::Tensor rows = at::empty(sizes, t.options());
    auto* dst = static_cast<char*>(rows.data_ptr());
    const auto r0 = Clock::now();
    for (std::int64_t i = 0; i < n; ++i) {
      const std::uint64_t at = r.weight->offset + static_cast<std::uint64_t>(unique[static_cast<std::size_t>(i)]) * row_bytes;
      files_[r.file]->read_into(at, row_bytes, dst + static_cast<std::uint64_t>(i) * row_bytes);
      if (options_.evict_page_cache) files_[r.file]->drop_cached(at, row_bytes);
    }
    stats_.read_seconds += since(r0);
    stats_.read_bytes += static_cast<std::uint64_t>(n) * row_bytes;
    stats_.streamed_bytes += static_cast<std::uint64_t>(n) * row_bytes;
    rows = cast_floating(cast_floating(rows, model_.dtype).to(model_.exec_device), options_.compute_dtype);
    w.set_gathered(r.name, rows, row_of_id);
  }
}

void Executor::release(Fetched& f) {
#ifdef MEMFIT_TORCH_CUDA
  // The pooled buffer may be refilled once this stage's host-to-device copies have finished.
  if (f.ready) f.ready->synchronize();
#endif
  f.weights.clear();
  f.streamed.clear();
  f.staging = at::Tensor();
  if (f.layout) {
    stats_.read_bytes += f.layout->read_bytes;
    stats_.read_seconds += f.read_seconds;
    if (options_.evict_page_cache)
      for (const StagedRead& r : f.layout->reads) files_[r.file]->drop_cached(r.file_offset, r.length);
  }
}

at::Tensor Executor::forward(const at::Tensor& input_ids, ForwardState* state) {
  at::NoGradGuard no_grad;
  const auto t0 = Clock::now();
  ForwardState local;
  ForwardState& s = state ? *state : local;
  check_input(input_ids, s.use_cache ? s.past : 0);
  s.input_ids = input_ids.to(at::TensorOptions().dtype(at::kLong).device(model_.exec_device));
  if (s.use_cache && s.keys.empty()) {
    s.keys.resize(static_cast<std::size_t>(program_.layers()));
    s.values.resize(static_cast<std::size_t>(program_.layers()));
  }
  if (s.use_cache && s.cache_dtype == at::ScalarType::Undefined)
    s.cache_dtype = options_.cache_dtype.value_or(model_.dtype);
  program_.prepare(s);
  const std::size_t first = options_.first_stage;
  const std::size_t end = options_.end_stage ? options_.end_stage : program_.stages().size();
  const std::size_t n = end - first;
  // The next stage of the range after `k`, wrapping to its first.
  auto after = [&](std::size_t k) { return first + (k + 1 - first) % n; };
  const std::size_t depth = options_.prefetch ? static_cast<std::size_t>(options_.prefetch_depth) : 0;
  // Fetches in flight are stages k .. k + depth; across forwards they wrap to the next forward's
  // first stages, never covering one stage twice. A forward that fails drops them (waiting for
  // their reads to end), so the next one starts from the range's first stage again.
  const std::size_t window = std::min(depth + 1, n);
  if (!ahead_.empty() && ahead_.front().first != first) ahead_.clear();
  struct DropOnError {
    Executor& e;
    bool done = false;
    ~DropOnError() {
      if (!done) e.ahead_.clear();
    }
  } guard{*this};
  for (std::size_t k = first; k < end; ++k) {
    std::shared_ptr<Fetched> f;
    const auto w0 = Clock::now();
    if (depth == 0) {
      f = fetch(k);
    } else {
      std::size_t next = ahead_.empty() ? k : after(ahead_.back().first);
      while (ahead_.size() < window) {
        if (next == first && !ahead_.empty() && !options_.prefetch_next_forward) break;  // would wrap
        // One read at a time, in stage order: each fetch starts when the one launched before it
        // has finished. Two readers at once turn a sequential stream into seeks between two
        // places (and a second reader thread preempts the compute) — in stage
        // order they run at the storage's streaming speed.
        std::shared_future<std::shared_ptr<Fetched>> before;
        if (!ahead_.empty()) before = ahead_.back().second;
        ahead_.emplace_back(next, std::async(std::launch::async, [this, next, before] {
                                    if (before.valid()) before.wait();  // its error is the caller's
                                    return fetch(next);
                                  }).share());
        next = after(next);
      }
      f = ahead_.front().second.get();  // a copy: the future may still be shared
      ahead_.pop_front();
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
    gather_rows(k, s, f->weights);
    program_.run(k, f->weights, s);
    release(*f);
  }
  guard.done = true;
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    stats_.staging_buffers = pool_.size();
  }
  stats_.most_reads_at_once = most_reading_;
  if (s.use_cache) s.past += s.input_ids.size(1);
  at::Tensor logits = s.logits.defined() ? s.logits.to(at::kCPU) : at::Tensor();
  s.logits = at::Tensor();
  stats_.seconds = since(t0);
  return logits;
}

void Executor::check_input(const at::Tensor& input_ids, std::int64_t past) const {
  if (input_ids.dim() != 2 || input_ids.numel() == 0)
    throw Failure{FailureKind::kUsage, fmt::format("the prompt is empty: a forward needs token ids [batch, tokens] "
                                                   "with at least one id (got shape [{}])",
                                                   fmt::join(input_ids.sizes().vec(), ", "))};
  const at::Tensor ids = input_ids.to(at::kCPU).to(at::kLong);
  const std::int64_t lo = ids.min().item<std::int64_t>(), hi = ids.max().item<std::int64_t>();
  for (const std::string& name : program_.stages().front().gathered) {
    const StoredWeight* w = model_.find(name);
    if (!w || w->tensor.dim() < 1) continue;
    const std::int64_t rows = w->tensor.size(0);
    if (lo < 0 || hi >= rows)
      throw Failure{FailureKind::kUsage,
                    fmt::format("token id {} is out of range: the embedding '{}' has {} rows (ids 0 … {})",
                                lo < 0 ? lo : hi, name, rows, rows - 1)};
  }
  const std::int64_t limit = program_.position_limit(), end = past + input_ids.size(1);
  if (limit > 0 && end > limit)
    throw Failure{FailureKind::kUsage,
                  fmt::format("{} positions ({} cached + {} new) exceed the model's {} learned positions",
                              end, past, input_ids.size(1), limit)};
}

at::ScalarType default_compute_dtype(const LoadedModel& model) {
  return model.exec_device.is_cuda() ? model.dtype : at::kFloat;
}

int default_compute_threads(const LoadedModel& model, const ExecOptions& options) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (!options.prefetch || !model.exec_device.is_cpu() || cores == 1) return cores;
  const bool streams = std::any_of(model.weights.begin(), model.weights.end(),
                                   [](const StoredWeight& w) { return w.on_disk(); });
  return streams ? cores - 1 : cores;
}

std::vector<std::int64_t> Executor::generate(const std::vector<std::int64_t>& prompt, int new_tokens) {
  GenerateRequest r;
  r.prompt = prompt;
  r.max_new_tokens = new_tokens;
  return torchrt::generate(*this, r).new_ids;
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
    if (w.on_disk()) t = cast_floating(aligned_copy(t), model_.dtype);
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
