// native/torch/compute_threads.h — which thread pool the compute threads go to.
//
// Debian's LibTorch calls a threaded OpenBLAS: two pools — ATen's intra-op (OpenMP) pool and
// OpenBLAS's own pthreads — each sized to every core by default, both spinning on the same
// cores, where they slow each other down several-fold (figures: README "Benchmarks").
// So the threads go to the BLAS (the matrix products are the work) and ATen runs its elementwise
// ops on one. Where the BLAS has no pool of its own (MKL or OpenMP builds: one shared pool), ATen
// gets them, as before.
#pragma once

namespace memfit::torchrt {

struct ComputeThreads {
  int aten = 1;  // ATen's intra-op threads
  int blas = 0;  // OpenBLAS's pthreads; 0: the BLAS has no pool of its own
};

// Gives `threads` compute threads to the pool that does the work (see above) and returns the split.
ComputeThreads apply_compute_threads(int threads);

}  // namespace memfit::torchrt
