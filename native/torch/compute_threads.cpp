#include "compute_threads.h"

#include <dlfcn.h>

#include <ATen/Parallel.h>

namespace memfit::torchrt {
namespace {

// OpenBLAS's threading entry points, if the process has OpenBLAS at all (LibTorch links the
// system BLAS; looked up at run time so other BLAS builds need nothing).
template <typename Fn>
Fn openblas(const char* name) {
  return reinterpret_cast<Fn>(::dlsym(RTLD_DEFAULT, name));
}

}  // namespace

ComputeThreads apply_compute_threads(int threads) {
  ComputeThreads out;
  const auto set = openblas<void (*)(int)>("openblas_set_num_threads");
  const auto parallel = openblas<int (*)()>("openblas_get_parallel");  // 1: its own pthreads
  if (set && parallel && parallel() == 1) {
    set(threads);
    out.blas = threads;
  } else {
    out.aten = threads;
  }
  at::set_num_threads(out.aten);
  return out;
}

}  // namespace memfit::torchrt
