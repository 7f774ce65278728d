// Session 10 experiment (not part of the engine): how many nanoseconds of the H200's FP64 units
// one hh compartment-step costs with no memory traffic at all (every value in registers), for
// hh.mod's rates written as before session 10 (18 divisions: "old") and as src/hh.h writes them
// now (6 divisions: "new"), next to the FP64 FMA rate measured in the same run. With the copy
// bandwidth it gives each class's compute floor of the hh rows against the step's byte floor.
// Also checks the two forms against each other on the host over -100..60 mV.
// Build and run (device): nvcc -O3 -arch=sm_90 -Isrc docs/bench/s10_hh_ceiling.cu -o hc && ./hc
#include <cstdio>
#include <cmath>
#include <cuda_runtime.h>
#include "hh.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); return 1; } } while (0)

// hh.mod's rates and cnexp as src/hh.h wrote them up to session 9 (verbatim but for the names)
__host__ __device__ static inline double old_vtrap(double x, double y) {
  double r = x / y;
  return fabs(r) < 1e-6 ? y * (1.0 - r / 2.0) : x / (exp(r) - 1.0);
}
__host__ __device__ static inline double old_cnexp(double x, double xinf, double tau, double dt) {
  return x + (1.0 - exp(-dt / tau)) * (xinf - x);
}
__host__ __device__ static inline void old_advance(double v, double q10, double dt, double *m,
                                                   double *h, double *n) {
  double alpha = 0.1 * old_vtrap(-(v + 40.0), 10.0);
  double beta = 4.0 * exp(-(v + 65.0) / 18.0);
  double sum = alpha + beta;
  double mtau = 1.0 / (q10 * sum), minf = alpha / sum;
  alpha = 0.07 * exp(-(v + 65.0) / 20.0);
  beta = 1.0 / (exp(-(v + 35.0) / 10.0) + 1.0);
  sum = alpha + beta;
  double htau = 1.0 / (q10 * sum), hinf = alpha / sum;
  alpha = 0.01 * old_vtrap(-(v + 55.0), 10.0);
  beta = 0.125 * exp(-(v + 65.0) / 80.0);
  sum = alpha + beta;
  double ntau = 1.0 / (q10 * sum), ninf = alpha / sum;
  *m = old_cnexp(*m, minf, mtau, dt);
  *h = old_cnexp(*h, hinf, htau, dt);
  *n = old_cnexp(*n, ninf, ntau, dt);
}

// One hh compartment-step as the step kernels do it: gates at v, then gna, gk and their terms.
template <int NEW>
__host__ __device__ static inline void hh_row(double v, double *m, double *h, double *n,
                                              double *acc) {
  if (NEW)
    se_hh_advance_gates(v, 1.0, 0.025, m, h, n);
  else
    old_advance(v, 1.0, 0.025, m, h, n);
  const double mm = *m, nn = *n, gna = 0.12 * mm * mm * mm * *h, gk = 0.036 * nn * nn * nn * nn;
  *acc += gna * 50.0 - gk * 77.0 + (gna + gk);
}

// Each thread: R independent compartments in registers, iters steps at voltages that move.
template <int NEW, int R>
__global__ void hh_loop(int iters, double *out) {
  const long t = blockIdx.x * (long)blockDim.x + threadIdx.x;
  double v[R], m[R], h[R], n[R], acc = 0.0;
#pragma unroll
  for (int r = 0; r < R; r++) {
    v[r] = -70.0 + 0.37 * ((t * R + r) % 97);
    m[r] = 0.05; h[r] = 0.6; n[r] = 0.32;
  }
  for (int k = 0; k < iters; k++)
#pragma unroll
    for (int r = 0; r < R; r++) {
      hh_row<NEW>(v[r], &m[r], &h[r], &n[r], &acc);
      v[r] = v[r] > 40.0 ? v[r] - 100.0 : v[r] + 1.3; // sweeps -70..40 mV, as a spiking cell
    }
  out[t] = acc + m[0] + h[R - 1] + n[0];
}

// FP64 FMA rate: 8 independent chains per thread.
__global__ void fma_loop(int iters, double *out) {
  const long t = blockIdx.x * (long)blockDim.x + threadIdx.x;
  double a[8];
  for (int r = 0; r < 8; r++) a[r] = 1e-3 * (t + r);
  const double b = 0.999999, c = 1e-7;
  for (int k = 0; k < iters; k++)
#pragma unroll
    for (int r = 0; r < 8; r++) a[r] = fma(a[r], b, c);
  double s = 0.0;
  for (int r = 0; r < 8; r++) s += a[r];
  out[t] = s;
}

template <class F>
static float time_ms(F launch) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  launch();
  cudaEventRecord(e0);
  launch();
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  float ms = 0.f;
  cudaEventElapsedTime(&ms, e0, e1);
  cudaEventDestroy(e0); cudaEventDestroy(e1);
  return ms;
}

int main() {
  // host: the two forms agree (relative, per gate after one step from the same state)
  double worst = 0.0;
  for (double v = -100.0; v <= 60.0; v += 0.01) {
    double m0 = 0.05, h0 = 0.6, n0 = 0.32, m1 = m0, h1 = h0, n1 = n0;
    old_advance(v, 1.0, 0.025, &m0, &h0, &n0);
    se_hh_advance_gates(v, 1.0, 0.025, &m1, &h1, &n1);
    worst = fmax(worst, fmax(fabs(m1 - m0) / fabs(m0), fmax(fabs(h1 - h0) / fabs(h0),
                                                               fabs(n1 - n0) / fabs(n0))));
  }
  printf("host: old and new forms of the gate update differ by at most %.2e relative "
         "(-100..60 mV, 0.01 mV steps)\n", worst);
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int block = 128, grid = sms * 16, iters = 200; // 16 blocks of 4 warps per SM
  const long threads = (long)grid * block;
  double *out;
  CK(cudaMalloc(&out, threads * sizeof(double)));
  // copy bandwidth, as simengine-bench measures it (device to device, 1 GiB)
  const size_t bytes = 1ul << 30;
  void *a, *b;
  CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&b, bytes));
  float cms = time_ms([&] { cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice); });
  const double copy = 2.0 * bytes / (cms * 1e-3); // bytes/s, read + write
  float fms = time_ms([&] { fma_loop<<<grid, block>>>(iters * 50, out); });
  CK(cudaGetLastError());
  const double fma_ns = fms * 1e6 / ((double)threads * iters * 50 * 8);
  printf("copy %.1f GB/s; FP64 FMA %.2f TFLOP/s (%.3e ns per FMA)\n", copy / 1e9,
         2e-3 / fma_ns, fma_ns);
  double ns_hh[2];
  for (int NEW = 0; NEW < 2; NEW++) {
    for (int R : {1, 2, 4}) {
      float ms = time_ms([&] {
        if (NEW) { if (R == 1) hh_loop<1, 1><<<grid, block>>>(iters, out);
                   else if (R == 2) hh_loop<1, 2><<<grid, block>>>(iters, out);
                   else hh_loop<1, 4><<<grid, block>>>(iters, out); }
        else { if (R == 1) hh_loop<0, 1><<<grid, block>>>(iters, out);
               else if (R == 2) hh_loop<0, 2><<<grid, block>>>(iters, out);
               else hh_loop<0, 4><<<grid, block>>>(iters, out); }
      });
      CK(cudaGetLastError());
      const double ns = ms * 1e6 / ((double)threads * iters * R);
      printf("hh compartment-step, %s form, %d per thread: %.4f ns = %.0f FMA times\n",
             NEW ? "new" : "old", R, ns, ns / fma_ns);
      if (R == 1 || ns < ns_hh[NEW]) ns_hh[NEW] = ns;
    }
  }
  CK(cudaDeviceSynchronize());
  // the classes of simengine-bench step (rows, hh rows per cell; docs/bench/s9_specialized.txt)
  struct { const char *name; int rows, hh; } cls[] = {
      {"small-low", 76, 23}, {"small-high", 76, 6}, {"medium-low", 305, 23},
      {"medium-high", 319, 4}, {"big-low", 695, 22}, {"big-high", 691, 3}};
  printf("%-12s %10s %12s %12s %12s %12s\n", "class", "floor ns", "1.5x floor", "hh old ns",
         "hh new ns", "new / floor");
  for (auto &c : cls) {
    const double fb = (64.0 * c.hh + 16.0 * (c.rows - c.hh)) / c.rows;
    const double floor_ns = fb / copy * 1e9;
    const double o = ns_hh[0] * c.hh / c.rows, n = ns_hh[1] * c.hh / c.rows;
    printf("%-12s %10.5f %12.5f %12.5f %12.5f %12.2f\n", c.name, floor_ns, 1.5 * floor_ns, o, n,
           n / floor_ns);
  }
  return 0;
}
