#include "weight_store.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "failure.h"
#include "offload_folder.h"
#include "torch_types.h"

#ifdef MEMFIT_TORCH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime_api.h>
#endif

namespace memfit::torchrt {
using checkpoint::TensorRecord;

namespace {

constexpr std::uint64_t kPage = 4096;

// A zero-copy view of a record's bytes; the deleter keeps the mapping alive as long as the view.
at::Tensor view_of(const TensorRecord& r, const std::shared_ptr<io::MappedFile>& file) {
  std::uint8_t* p = file->at(r.data_offset, r.span_bytes, r.name);
  const auto options = at::TensorOptions().dtype(to_scalar_type(r.dtype, r.name));
  return at::from_blob(p, r.shape, r.stride, [keep = file](void*) {}, options);
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14
#endif

}  // namespace

void populate(const io::MappedFile& f, std::uint64_t offset, std::uint64_t length) {
  if (length == 0) return;
  const auto start = reinterpret_cast<std::uintptr_t>(f.data() + offset) & ~(kPage - 1);
  const auto end = reinterpret_cast<std::uintptr_t>(f.data() + offset + length);
  if (::madvise(reinterpret_cast<void*>(start), end - start, MADV_POPULATE_READ) == 0) return;
  f.advise_willneed(offset, length);
  volatile std::uint8_t sink = 0;
  const std::uint8_t* p = f.data() + offset;
  for (std::uint64_t i = 0; i < length; i += kPage) sink = sink + p[i];
  sink = sink + p[length - 1];
}

namespace {

at::Device execution_device(const LoadPlan& plan) {
  // accelerate's main_device: the first GPU the map uses, else the CPU.
  int gpu = -1;
  for (const auto& w : plan.weights)
    if (w.device.is_gpu() && (gpu < 0 || w.device.index < gpu)) gpu = w.device.index;
  return gpu < 0 ? at::Device(at::kCPU) : at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(gpu));
}

// .bin weights placed on disk go to an Accelerate offload folder (index.json + one .dat per
// tensor, in the load dtype), written atomically by native/checkpoint/offload_folder: a failure or a cancel
// leaves no partial folder. Returns, per disk weight of `lp.weights`, the mapped .dat file.
std::unordered_map<std::size_t, std::shared_ptr<io::MappedFile>> offload_bin_weights(
    const LoadPlan& lp, at::ScalarType dtype, const std::string& folder,
    const std::function<std::shared_ptr<io::MappedFile>(std::size_t)>& file_of,
    const std::function<void(std::uint64_t)>& advance) {
  std::vector<const PlacedWeight*> disk;
  for (const auto& w : lp.weights)
    if (w.device.kind == plan::Device::Kind::kDisk) disk.push_back(&w);
  std::unordered_map<std::size_t, std::shared_ptr<io::MappedFile>> out;
  if (disk.empty()) return out;
  if (folder.empty())
    throw Failure{FailureKind::kUsage,
                   fmt::format("{}: {} tensor(s) of this .bin checkpoint are placed on disk; pass "
                               "--offload-folder DIR to hold them (safetensors need none: disk "
                               "weights point into the shards)", lp.source.path, disk.size())};
  std::vector<checkpoint::OffloadEntry> entries;
  for (const PlacedWeight* w : disk) {
    const TensorRecord& r = lp.source.tensors[w->record];
    const DType st = at::isFloatingType(to_scalar_type(r.dtype, r.name)) ? from_scalar_type(dtype) : r.dtype;
    entries.push_back({w->model_name, st, r.shape});
  }
  const auto result = checkpoint::write_offload_folder(
      folder, entries, [&](std::size_t i, const checkpoint::OffloadEntry& e, const checkpoint::ChunkWriter& write) {
        const TensorRecord& r = lp.source.tensors[disk[i]->record];
        const auto file = file_of(r.file);
        const at::Tensor t = cast_floating(view_of(r, file), dtype).contiguous();
        write(t.data_ptr(), static_cast<std::size_t>(e.nbytes()));
        file->advise_dontneed(r.data_offset, r.span_bytes);
        advance(r.nbytes);  // may throw (cancel): the writer removes its temporary folder
      });
  if (result.reused)
    for (const PlacedWeight* w : disk) advance(lp.source.tensors[w->record].nbytes);
  for (std::size_t i = 0; i < disk.size(); ++i)
    out[disk[i]->record] = std::make_shared<io::MappedFile>(checkpoint::map_offloaded(result.folder, entries[i]));
  return out;
}

}  // namespace

at::Tensor aligned_copy(const at::Tensor& source) {
  const std::uint64_t nbytes = source.numel() * source.element_size();
  auto buffer = at::empty({static_cast<std::int64_t>(nbytes + 64)}, at::TensorOptions().dtype(at::kByte));
  const auto src_mod = reinterpret_cast<std::uintptr_t>(source.data_ptr()) % 64;
  const auto buf_mod = reinterpret_cast<std::uintptr_t>(buffer.data_ptr()) % 64;
  std::uint8_t* dst = static_cast<std::uint8_t*>(buffer.data_ptr()) + (src_mod + 64 - buf_mod) % 64;
  auto out = at::from_blob(dst, source.sizes(), [keep = buffer](void*) {},
                           at::TensorOptions().dtype(source.scalar_type()));
  if (source.is_contiguous()) std::memcpy(dst, source.data_ptr(), nbytes);
  else out.copy_(source);
  return out;
}

const StoredWeight* LoadedModel::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &weights[it->second];
}

void LoadedModel::index() {
  by_name_.clear();
  for (std::size_t i = 0; i < weights.size(); ++i) by_name_[weights[i].name] = i;
}

DeviceInventory device_inventory() {
  DeviceInventory inv;
  inv.cpu_available_bytes = available_system_memory();
#ifdef MEMFIT_TORCH_CUDA
  if (cuda_available()) {
    const int n = static_cast<int>(c10::cuda::device_count());
    for (int i = 0; i < n; ++i) {
      c10::cuda::set_device(static_cast<c10::DeviceIndex>(i));
      std::size_t free = 0, total = 0;
      if (cudaMemGetInfo(&free, &total) != cudaSuccess) free = 0;
      inv.gpu_free_bytes.push_back(free);
    }
    if (n > 0) c10::cuda::set_device(0);
  }
#endif
  return inv;
}

std::unique_ptr<LoadedModel> load_model(LoadPlan plan, const LoadOptions& options) {
  at::NoGradGuard no_grad;
  auto model = std::make_unique<LoadedModel>();
  model->plan = std::move(plan);
  const LoadPlan& lp = model->plan;
  model->dtype = to_scalar_type(lp.dtype, "--dtype");
  model->exec_device = execution_device(lp);
  model->stats.before = read_process_memory();
  const bool pin = cuda_available();  // CPU weights are streamed to a GPU: page-locked
  const auto t0 = std::chrono::steady_clock::now();

  std::vector<std::shared_ptr<io::MappedFile>> files(lp.source.files.size());
  auto file_of = [&](std::size_t i) -> std::shared_ptr<io::MappedFile> {
    if (!files[i]) {
      files[i] = std::make_shared<io::MappedFile>(lp.source.files[i].path);
      files[i]->advise_sequential(0, files[i]->size());  // one pass in file order: read ahead
    }
    return files[i];
  };

  std::uint64_t total = 0, done = 0;
  for (const auto& w : lp.weights) total += lp.source.tensors[w.record].nbytes;
  auto advance = [&](std::uint64_t bytes) {
    done += bytes;
    if (options.progress && done < total && !options.progress(done, total))
      throw Failure{FailureKind::kCancelled,
                     fmt::format("{}: load cancelled after {} of {} bytes; nothing was kept",
                                 lp.source.path, done, total)};
  };
  std::unordered_map<std::size_t, std::shared_ptr<io::MappedFile>> offloaded;
  if (lp.source.format == checkpoint::Format::kPytorchBin)
    offloaded = offload_bin_weights(lp, model->dtype, options.offload_folder, file_of, advance);
  // File order, then offset: the page cache and readahead see one sequential pass per shard.
  std::vector<const PlacedWeight*> order;
  for (const auto& w : lp.weights) order.push_back(&w);
  std::stable_sort(order.begin(), order.end(), [&](const PlacedWeight* a, const PlacedWeight* b) {
    const auto& ra = lp.source.tensors[a->record];
    const auto& rb = lp.source.tensors[b->record];
    return std::tie(ra.file, ra.data_offset) < std::tie(rb.file, rb.data_offset);
  });

  for (const PlacedWeight* pw : order) {
    const TensorRecord& r = lp.source.tensors[pw->record];
    const auto& file = file_of(r.file);
    StoredWeight sw;
    sw.name = pw->model_name;
    sw.device = pw->device;
    sw.mapping = file;
    sw.offset = r.data_offset;
    sw.span = r.span_bytes;
    sw.nbytes = r.nbytes;
    at::Tensor view = view_of(r, file);
    const bool same_dtype = view.scalar_type() == model->dtype || !at::isFloatingType(view.scalar_type());
    switch (pw->device.kind) {
      case plan::Device::Kind::kDisk:
        if (auto it = offloaded.find(pw->record); it != offloaded.end()) {
          // A .dat of the offload folder: C order, already in the load dtype.
          sw.mapping = it->second;
          sw.offset = 0;
          sw.span = sw.mapping->size();
          sw.tensor = at::from_blob(sw.mapping->data(), r.shape, [keep = sw.mapping](void*) {},
                                    at::TensorOptions().dtype(at::isFloatingType(view.scalar_type())
                                                                  ? model->dtype : view.scalar_type()));
          model->stats.disk_bytes += r.nbytes;
          model->weights.push_back(std::move(sw));
          continue;  // its bytes were counted by the offload writer
        }
        // Points straight into the safetensors shard: no copy, no RAM until a block needs it.
        sw.tensor = view;
        model->stats.disk_bytes += r.nbytes;
        break;
      case plan::Device::Kind::kCpu:
        if (same_dtype && !pin && r.contiguous) {
          populate(*file, r.data_offset, r.span_bytes);
          sw.tensor = view;  // zero-copy: the mapping is the CPU copy
        } else {
          const auto dtype = at::isFloatingType(view.scalar_type()) ? model->dtype : view.scalar_type();
          sw.tensor = at::empty(view.sizes(), at::TensorOptions().dtype(dtype).pinned_memory(pin));
          sw.tensor.copy_(view);
          file->advise_dontneed(r.data_offset, r.span_bytes);
        }
        model->stats.cpu_bytes += sw.tensor.numel() * sw.tensor.element_size();
        break;
      case plan::Device::Kind::kGpu: {
        // Cast on the CPU first so every placement applies the very same conversion.
        sw.tensor = cast_floating(view, model->dtype).to(at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(pw->device.index)));
        file->advise_dontneed(r.data_offset, r.span_bytes);
        model->stats.gpu_bytes += sw.tensor.numel() * sw.tensor.element_size();
        break;
      }
      case plan::Device::Kind::kMps:
        throw Failure{FailureKind::kUsage, fmt::format("tensor '{}': mps is not a memfit-torch device", sw.name)};
    }
    model->stats.largest_tensor_bytes = std::max(model->stats.largest_tensor_bytes, r.nbytes);
    model->weights.push_back(std::move(sw));
    advance(r.nbytes);
  }
  if (options.progress) options.progress(total, total);  // always 1.0 at the end
  model->stats.bytes_read = total;
  model->stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  model->stats.after = read_process_memory();
  model->index();
  return model;
}

}  // namespace memfit::torchrt
