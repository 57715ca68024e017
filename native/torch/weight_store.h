// native/torch/weight_store.h — the model's weights, placed: GPU and CPU tensors in the load dtype,
// disk weights as zero-copy views into the original shard mappings (no second copy).
//
// Loading follows a LoadPlan (validated, device map checked) tensor by tensor in file order:
// a CPU tensor in the stored dtype is a view over the mapping (its pages read once); anything
// else is copied straight into its final placement with the dtype cast, and the source pages are
// dropped right after — so the peak RSS beyond what stays resident is about one tensor.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <ATen/ATen.h>

#include "load_plan.h"
#include "mapped_file.h"
#include "process_memory.h"

namespace memfit::torchrt {

struct StoredWeight {
  std::string name;      // the model's name for it
  plan::Device device;   // where the device map put it
  at::Tensor tensor;     // GPU/CPU: resident, load dtype. Disk: a view over `mapping`, stored dtype
  std::shared_ptr<io::MappedFile> mapping;  // the file the bytes come from (disk: still needed)
  std::uint64_t offset = 0, span = 0;        // its range in `mapping`
  std::uint64_t nbytes = 0;                  // stored bytes
  bool on_disk() const { return device.kind == plan::Device::Kind::kDisk; }
};

// Called after each tensor with (bytes done, total); returning false cancels the load: every
// tensor and mapping is freed, and the call throws Failure(kCancelled).
using ProgressCallback = std::function<bool(std::uint64_t done, std::uint64_t total)>;

struct LoadOptions {
  ProgressCallback progress;
  std::string offload_folder;  // .bin sources with disk placement (Accelerate's format)
};

struct LoadStats {
  double seconds = 0;
  std::uint64_t bytes_read = 0;                  // checkpoint bytes of the loaded tensors
  std::uint64_t gpu_bytes = 0, cpu_bytes = 0, disk_bytes = 0;  // placed, in the load dtype / stored
  std::uint64_t largest_tensor_bytes = 0;
  ProcessMemory before, after;  // VmRSS / VmHWM around the load
};

class LoadedModel {
 public:
  LoadPlan plan;
  at::ScalarType dtype = at::kFloat;  // load dtype
  at::Device exec_device{at::kCPU};   // where blocks run: GPU 0 when the map uses a GPU
  std::vector<StoredWeight> weights;
  LoadStats stats;

  // nullptr when the model has no such tensor (a missing one loaded with --allow-missing).
  const StoredWeight* find(const std::string& name) const;
  void index();

 private:
  std::unordered_map<std::string, std::size_t> by_name_;
};

std::unique_ptr<LoadedModel> load_model(LoadPlan plan, const LoadOptions& options = {});

// What this machine has (GPUs' free memory via CUDA, CPU MemAvailable), for the planner.
DeviceInventory device_inventory();

// Reads every page of a range of a mapping once (so "loaded" means in memory, as with a copy).
// One MADV_POPULATE_READ call faults the range in with the kernel's readahead; older kernels
// fall back to touching one byte per page.
void populate(const io::MappedFile& f, std::uint64_t offset, std::uint64_t length);

// A view of `bytes` (the stored dtype/shape/stride of `w`) copied into fresh memory whose address
// has the same offset modulo 64 as the source: kernels choose code paths by alignment, and a
// disk-streamed weight must give the same bits as the zero-copy resident one.
at::Tensor aligned_copy(const at::Tensor& source);

}  // namespace memfit::torchrt
