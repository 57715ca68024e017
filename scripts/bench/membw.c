/* scripts/bench/membw.c — the machine's memory read bandwidth, the bound of a decoding step whose
 * weights are resident: THREADS threads sum disjoint parts of a 1 GiB buffer (four 8-float accumulators),
 * best of 20 passes, in GB/s. Usage: membw [THREADS] */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : omp_get_max_threads();
  const size_t n = (size_t)1 << 28; /* floats: 1 GiB */
  float* a = aligned_alloc(64, n * sizeof(float));
  if (!a) return 1;
#pragma omp parallel for num_threads(threads)
  for (size_t i = 0; i < n; ++i) a[i] = (float)(i & 7); /* each thread faults in its own part */
  double best = 1e30, sink = 0;
  for (int pass = 0; pass < 20; ++pass) {
    const double t0 = now();
    double total = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : total) schedule(static)
    for (size_t b = 0; b < n; b += 4096) {
      float acc[32] = {0}; /* four independent vectors of 8: loads, not add latency, set the pace */
      for (size_t i = b; i < b + 4096; i += 32)
        for (int j = 0; j < 32; ++j) acc[j] += a[i + j];
      for (int j = 0; j < 32; ++j) total += acc[j];
    }
    const double t = now() - t0;
    if (t < best) best = t;
    sink += total;
  }
  printf("%.2f\n", n * sizeof(float) / best / 1e9);
  fprintf(stderr, "membw: %d threads, checksum %g\n", threads, sink);
  free(a);
  return 0;
}
