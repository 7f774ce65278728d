// Batched tridiagonal solvers on the GPU: cuThomasBatch, an improved one-thread Thomas, the
// register-partitioned Thomas, variable-size batches (cuThomasVBatch, CP and NCP), and the
// cuSPARSE peers behind one handle. See tridiag_batch.h and docs/gpu-tridiag.md.
#include "tridiag_batch.h"
#include "async_copy.cuh"


#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace {

enum { VAR_NONE = 0, VAR_CP = 1, VAR_NCP = 2 };

// Largest CUDA block of the partitioned kernel: its __launch_bounds__.
constexpr int PART_MAX_THREADS = 256;

// AUTO on the interleaved layout (part_choose), from the H200 sweeps: staged from this many
// groups per SM (256 rows: one group per block 2% faster at 5120 systems, staged 12% at 10 240;
// 512 rows: one group 3% faster at 2560, staged 7% at 5120), two halves from this many groups
// of 16 systems per SM (512 rows: staged G = 8 is 8% faster at 51 200 systems, two halves 4% at
// 102 400, 10% at 153 600 and 256 000 against one group per block).
constexpr int PART_STAGE_GROUPS = 4;
constexpr int PART_SPLIT_GROUPS = 32;

// ---- cuThomasBatch: the paper's kernel ---------------------------------------------------------
// One thread per system on the interleaved layout. Forward: c'_j = c_j / (b_j - a_j c'_{j-1}),
// d'_j = (d_j - a_j d'_{j-1}) / (b_j - a_j c'_{j-1}), c' stored in cp, d' in x; backward:
// x_j = d'_j - c'_j x_{j+1}. The previous row's c', d' are read back from memory (no restrict),
// two divisions per row, as in the reference implementation.
template <int VAR>
__global__ void thomas_plain_kernel(int n, int count, int blk, const int *sizes, const double *a,
                                    const double *b, const double *c, double *x, double *cp) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= count)
    return;
  const int ns = VAR != VAR_NONE ? sizes[s] : n;
  const int nl = VAR == VAR_NCP ? ns : n;
  const size_t st = blk ? (size_t)blk : (size_t)count; // row stride of the layout
  const size_t s0 = blk ? (size_t)(s / blk) * blk * n + (size_t)(s % blk) : (size_t)s;
  const double c0 = ns > 1 ? c[s0] : 0.0;
  cp[s0] = c0 / b[s0];
  x[s0] = x[s0] / b[s0];
  for (int j = 1; j < nl; j++) {
    const size_t o = s0 + (size_t)j * st;
    double aj = a[o], bj = b[o], cj = c[o], dj = x[o];
    if (j >= ns) { // padding of a CP variable batch: an identity row
      aj = 0.0;
      bj = 1.0;
      cj = 0.0;
      dj = 0.0;
    } else if (j == ns - 1) {
      cj = 0.0;
    }
    const double den = bj - aj * cp[o - st];
    cp[o] = cj / den;
    x[o] = (dj - aj * x[o - st]) / den;
  }
  for (int j = nl - 2; j >= 0; j--) {
    const size_t o = s0 + (size_t)j * st;
    x[o] = x[o] - cp[o] * x[o + st];
  }
}

// ---- improved one-thread Thomas --------------------------------------------------------------
// Running c', d' in registers, one reciprocal per row, loads of U rows issued before their use.
// c' and d' still make a round trip through memory (16 B written, 16 B read back per row).
template <int VAR>
__global__ void __launch_bounds__(256)
    thomas_reg_kernel(int n, int count, int blk, const int *__restrict__ sizes,
                      const double *__restrict__ a, const double *__restrict__ b,
                      const double *__restrict__ c, double *__restrict__ x,
                      double *__restrict__ cp) {
  constexpr int U = 4;
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= count)
    return;
  const int ns = VAR != VAR_NONE ? sizes[s] : n;
  const int nl = VAR == VAR_NCP ? ns : n;
  const size_t st = blk ? (size_t)blk : (size_t)count;
  const size_t s0 = blk ? (size_t)(s / blk) * blk * n + (size_t)(s % blk) : (size_t)s;
  double cprev = 0.0, dprev = 0.0;
  for (int j = 0; j < nl; j += U) {
    double av[U], bv[U], cv[U], dv[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
      const int jj = j + u;
      const size_t o = s0 + (size_t)jj * st;
      const bool in = jj < nl;
      av[u] = in ? __ldg(a + o) : 0.0;
      bv[u] = in ? __ldg(b + o) : 1.0;
      cv[u] = in ? __ldg(c + o) : 0.0;
      dv[u] = in ? x[o] : 0.0;
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
      const int jj = j + u;
      if (jj >= nl)
        break;
      double aj = av[u], bj = bv[u], cj = cv[u], dj = dv[u];
      if (jj >= ns) {
        aj = 0.0;
        bj = 1.0;
        cj = 0.0;
        dj = 0.0;
      }
      if (jj == 0)
        aj = 0.0;
      if (jj == ns - 1)
        cj = 0.0;
      const double w = 1.0 / (bj - aj * cprev);
      cprev = cj * w;
      dprev = (dj - aj * dprev) * w;
      const size_t o = s0 + (size_t)jj * st;
      cp[o] = cprev;
      x[o] = dprev;
    }
  }
  double xn = dprev; // x of row nl - 1, already stored
  for (int j = nl - 2; j >= 0; j -= U) {
    double cv[U], dv[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
      const int jj = j - u;
      const size_t o = s0 + (size_t)(jj < 0 ? 0 : jj) * st;
      cv[u] = jj >= 0 ? cp[o] : 0.0;
      dv[u] = jj >= 0 ? x[o] : 0.0;
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
      const int jj = j - u;
      if (jj < 0)
        break;
      xn = dv[u] - cv[u] * xn;
      x[s0 + (size_t)jj * st] = xn;
    }
  }
}

// ---- register-partitioned Thomas ---------------------------------------------------------------
// Block (G, K): threadIdx.x = system within the block (G systems), threadIdx.y = chunk q of M
// rows (K chunks cover n). A warp reads G consecutive systems' rows: coalesced on the
// interleaved layout. Each thread:
//  1. loads its M rows (4 M independent loads in flight) into registers;
//  2. modified Thomas: rows i >= 1 become a'_i x_0 + x_i + c'_i x_{i+1} = d'_i (forward), rows
//     1 .. M-2 become a''_i x_0 + x_i + c''_i x_{M-1} = d''_i (backward), row 0 becomes
//     A x_{-1} + x_0 + C x_{M-1} = D; rows 0 and M-1 of every chunk form a tridiagonal reduced
//     system of 2K rows with unit diagonal (strictly diagonally dominant when the batch is);
//  3. the reduced system is solved in shared memory: PCR (default) on the K chunk-last unknowns
//     (each chunk's first unknown eliminated with its neighbours' first rows; one row per
//     thread, ceil(log2 K) steps), or Thomas on the 2K first and last rows by the chunk-0 thread;
//  4. x_i = d''_i - a''_i x_0 - c''_i x_{M-1} in registers, stored once.
// Rows past the system's size are identity rows in registers.
// part_kernel solves one group of G systems per block; part_pipe_kernel (below) is persistent
// and stages the next group's rows in shared memory while it solves the current one;
// part_split_kernel solves each system in two halves of rows (pipeline = 3).

// Step 1's complement: rows of a chunk (global rows j0 ..) that are not the system's become
// identity rows; a = 0 on the system's first row, c = 0 on its last.
template <int M>
__device__ __forceinline__ void part_rows(int ns, bool live, int j0, double (&a)[M],
                                          double (&b)[M], double (&c)[M], double (&d)[M]) {
#pragma unroll
  for (int i = 0; i < M; i++) {
    const int j = j0 + i;
    if (!live || j >= ns) {
      a[i] = 0.0;
      b[i] = 1.0;
      c[i] = 0.0;
      d[i] = 0.0;
    }
    if (j == 0)
      a[i] = 0.0;
    if (j == ns - 1)
      c[i] = 0.0;
  }
}

// Step 2 on a chunk in registers: afterwards rows 1 .. M-2 read a''_i x_0 + x_i + c''_i x_{M-1}
// = d''_i (in a, c, d), row M-1 a'_{M-1} x_0 + x_{M-1} + c'_{M-1} x_M = d'_{M-1}, and row 0 is
// returned as a0 x_{-1} + x_0 + c0 x_{M-1} = d0.
template <int M>
__device__ __forceinline__ void part_eliminate(double (&a)[M], double (&b)[M], double (&c)[M],
                                               double (&d)[M], double &a0, double &c0,
                                               double &d0) {
  static_assert(M >= 3, "chunks of at least 3 rows");
  // forward: normalise rows 0 and 1, then eliminate x_{i-1} from rows 2 .. M-1
  double r = 1.0 / b[0];
  a[0] *= r;
  c[0] *= r;
  d[0] *= r;
  r = 1.0 / b[1];
  a[1] *= r;
  c[1] *= r;
  d[1] *= r;
#pragma unroll
  for (int i = 2; i < M; i++) {
    r = 1.0 / (b[i] - a[i] * c[i - 1]);
    d[i] = (d[i] - a[i] * d[i - 1]) * r;
    a[i] = -(a[i] * a[i - 1]) * r;
    c[i] = c[i] * r;
  }
  // backward: eliminate x_{i+1} from rows M-3 .. 1 (row M-2 already refers to x_{M-1})
#pragma unroll
  for (int i = M - 3; i >= 1; i--) {
    d[i] = d[i] - c[i] * d[i + 1];
    a[i] = a[i] - c[i] * a[i + 1];
    c[i] = -(c[i] * c[i + 1]);
  }
  // row 0: substitute x_1 = d''_1 - a''_1 x_0 - c''_1 x_{M-1}
  r = 1.0 / (1.0 - c[0] * a[1]);
  a0 = a[0] * r;
  c0 = -(c[0] * c[1]) * r;
  d0 = (d[0] - c[0] * d[1]) * r;
}

// Step 3 by PCR on the chunks' last unknowns L_q = x_{M-1} of chunk q (K rows, one per thread q
// of system ls; sh: 6 K G doubles, 7 K G with OPEN): each chunk's first unknown F_q = d0 -
// a0 L_{q-1} - c0 L_q and the next chunk's F_{q+1} are substituted into its last row
// a_l F_q + L_q + c_l F_{q+1} = d_l, then ceil(log2 K) PCR steps. Returns x0 = F_q, xl = L_q.
// Without OPEN the last chunk's c_l is dropped (0 there: the system's last row or an identity
// row). With OPEN it couples to an unknown z past the block's rows (the next half of the
// system), carried as a second right-hand side: F_q = x0 + z x0e, L_q = xl + z xle.
template <int M, bool OPEN>
__device__ __forceinline__ void part_pcr(int q, int K, int G, int ls, const double (&a)[M],
                                         const double (&c)[M], const double (&d)[M], double a0,
                                         double c0, double d0, double *sh, double &x0,
                                         double &xl, double &x0e, double &xle) {
  const int R = 2 * K;
  double *sa = sh, *sc = sh + R * G, *sd = sh + 2 * R * G;
  sa[q * G + ls] = a0;
  sc[q * G + ls] = c0;
  sd[q * G + ls] = d0;
  __syncthreads();
  double an = 0.0, cn = 0.0, dn = 0.0;
  if (q + 1 < K) {
    an = sa[(q + 1) * G + ls];
    cn = sc[(q + 1) * G + ls];
    dn = sd[(q + 1) * G + ls];
  }
  const double al = a[M - 1], cl = c[M - 1], dl = d[M - 1];
  const double r = 1.0 / (1.0 - al * c0 - cl * an);
  double ra = -(al * a0) * r, rc = -(cl * cn) * r, rd = (dl - al * d0 - cl * dn) * r;
  // row q: L_q + ra L_{q-1} + rc L_{q+1} = rd + z re
  double re = OPEN && q == K - 1 ? -(cl * r) : 0.0;
  // PCR on the K rows (ra, 1, rc, rd): row q -= a_q row(q - h) + c_q row(q + h), renormalised
  double *pa = sa + K * G, *pc = sc + K * G, *pd = sd + K * G, *pe = sh + 3 * R * G;
  pa[q * G + ls] = ra;
  pc[q * G + ls] = rc;
  pd[q * G + ls] = rd;
  if (OPEN)
    pe[q * G + ls] = re;
  for (int h = 1; h < K; h <<= 1) {
    __syncthreads();
    double a1 = 0.0, c1 = 0.0, d1 = 0.0, e1 = 0.0, a2 = 0.0, c2 = 0.0, d2 = 0.0, e2 = 0.0;
    if (q - h >= 0) {
      a1 = pa[(q - h) * G + ls];
      c1 = pc[(q - h) * G + ls];
      d1 = pd[(q - h) * G + ls];
      if (OPEN)
        e1 = pe[(q - h) * G + ls];
    }
    if (q + h < K) {
      a2 = pa[(q + h) * G + ls];
      c2 = pc[(q + h) * G + ls];
      d2 = pd[(q + h) * G + ls];
      if (OPEN)
        e2 = pe[(q + h) * G + ls];
    }
    const double w = 1.0 / (1.0 - ra * c1 - rc * a2);
    const double na = -(ra * a1) * w, nc = -(rc * c2) * w, nd = (rd - ra * d1 - rc * d2) * w;
    const double ne = OPEN ? (re - ra * e1 - rc * e2) * w : 0.0;
    __syncthreads();
    ra = na;
    rc = nc;
    rd = nd;
    re = ne;
    pa[q * G + ls] = ra;
    pc[q * G + ls] = rc;
    pd[q * G + ls] = rd;
    if (OPEN)
      pe[q * G + ls] = re;
  }
  __syncthreads();
  xl = rd;
  const double lprev = q > 0 ? pd[(q - 1) * G + ls] : 0.0;
  x0 = d0 - a0 * lprev - c0 * xl;
  xle = re;
  x0e = 0.0;
  if (OPEN) {
    const double eprev = q > 0 ? pe[(q - 1) * G + ls] : 0.0;
    x0e = -(a0 * eprev) - c0 * xle;
  }
}

// Step 3 by Thomas on the 2K first and last rows of the chunks, by thread q = 0 of system ls
// (sh: 6 K G doubles). Returns x0 = x_0 and xl = x_{M-1} of chunk q.
template <int M>
__device__ __forceinline__ void part_thomas(int q, int K, int G, int ls, const double (&a)[M],
                                            const double (&c)[M], const double (&d)[M],
                                            double a0, double c0, double d0, double *sh,
                                            double &x0, double &xl) {
  const int R = 2 * K, r0 = 2 * q, r1 = 2 * q + 1;
  double *sa = sh, *sc = sh + R * G, *sd = sh + 2 * R * G;
  sa[r0 * G + ls] = a0;
  sc[r0 * G + ls] = c0;
  sd[r0 * G + ls] = d0;
  sa[r1 * G + ls] = a[M - 1];
  sc[r1 * G + ls] = c[M - 1];
  sd[r1 * G + ls] = d[M - 1];
  __syncthreads();
  if (q == 0) {
    double cprev = sc[ls], dprev = sd[ls]; // row 0: a = 0 (first row of the system)
    for (int i = 1; i < R; i++) {
      const double ai = sa[i * G + ls];
      const double w = 1.0 / (1.0 - ai * cprev);
      cprev = sc[i * G + ls] * w;
      dprev = (sd[i * G + ls] - ai * dprev) * w;
      sc[i * G + ls] = cprev;
      sd[i * G + ls] = dprev;
    }
    double xn = dprev;
    for (int i = R - 2; i >= 0; i--) {
      xn = sd[i * G + ls] - sc[i * G + ls] * xn;
      sd[i * G + ls] = xn;
    }
  }
  __syncthreads();
  x0 = sd[r0 * G + ls];
  xl = sd[r1 * G + ls];
}

// Row i of a chunk from its first and last unknowns: d''_i - a''_i x_0 - c''_i x_{M-1}.
template <int M>
__device__ __forceinline__ double part_row(int i, const double (&a)[M], const double (&c)[M],
                                           const double (&d)[M], double x0, double xl) {
  return i == 0 ? x0 : (i == M - 1 ? xl : d[i] - a[i] * x0 - c[i] * xl);
}

// Steps 1 (the rows' fix-up) to 4 for chunk q (rows j0 = q M ..) of a system of ns rows whose
// M rows are in a, b, c, d; sh: 6 K G doubles for the reduced system.
template <int M, bool PCR>
__device__ __forceinline__ void part_solve(int ns, int nmem, bool live, int q, int K, int G,
                                           int ls, size_t s0, size_t st, double (&a)[M],
                                           double (&b)[M], double (&c)[M], double (&d)[M],
                                           double *sh, double *__restrict__ X) {
  const int j0 = q * M;
  part_rows<M>(ns, live, j0, a, b, c, d);
  double a0, c0, d0, x0, xl, x0e, xle;
  part_eliminate<M>(a, b, c, d, a0, c0, d0);
  if (PCR)
    part_pcr<M, false>(q, K, G, ls, a, c, d, a0, c0, d0, sh, x0, xl, x0e, xle);
  else
    part_thomas<M>(q, K, G, ls, a, c, d, a0, c0, d0, sh, x0, xl);
  if (!live)
    return;
#pragma unroll
  for (int i = 0; i < M; i++) {
    const int j = j0 + i;
    const double xi = part_row<M>(i, a, c, d, x0, xl);
    if (j < nmem)
      X[s0 + (size_t)j * st] = xi;
  }
}

template <int M, int VAR, bool PCR>
__global__ void __launch_bounds__(PART_MAX_THREADS)
    part_kernel(int n, int count, int blk, const int *__restrict__ sizes, const double *__restrict__ A,
                const double *__restrict__ B, const double *__restrict__ C,
                double *__restrict__ X) {
  extern __shared__ double sh[];
  const int G = blockDim.x, K = blockDim.y;
  const int ls = threadIdx.x, q = threadIdx.y;
  const int s = blockIdx.x * G + ls;
  const bool live = s < count;
  const int ns = (VAR != VAR_NONE && live) ? sizes[s] : n;
  const int nmem = VAR == VAR_NCP ? ns : n; // rows this system reads and writes
  const int j0 = q * M;
  // interleaved: row j at j * count + s; block-interleaved (blk == G): the block's own tile
  const size_t st = blk ? (size_t)blk : (size_t)count;
  const size_t s0 = blk ? (size_t)blockIdx.x * blk * n + (size_t)ls : (size_t)s;
  double a[M], b[M], c[M], d[M];
#pragma unroll
  for (int i = 0; i < M; i++) {
    const int j = j0 + i;
    const bool in = live && j < nmem;
    const size_t o = s0 + (size_t)j * st;
    a[i] = in ? __ldg(A + o) : 0.0;
    b[i] = in ? __ldg(B + o) : 1.0;
    c[i] = in ? __ldg(C + o) : 0.0;
    d[i] = in ? X[o] : 0.0;
  }
  part_solve<M, PCR>(ns, nmem, live, q, K, G, ls, s0, st, a, b, c, d, sh, X);
}

// Doubles between consecutive chunks of the staged tile: M G rounded so that the stride is 8
// (mod 16) doubles, i.e. chunks q and q + 1 start half a bank row apart: a warp's reads of one
// row of 2 or 4 chunks then need no more shared-memory wavefronts than their bytes.
__host__ __device__ constexpr int part_pipe_stride(int M, int G) {
  return M * G + ((8 - (M * G) % 16) + 16) % 16;
}

// The staging copy of the pipelined PART kernels, one value (8 B, cp.async) per array and row:
// rows jj = q + m step (m < M) with jj < rows and j1 + jj < nmem of the system whose row 0 is at
// s0 (row stride st) go to the tile (array stride ts) at (jj / M) cs + (jj % M) G + ls.
template <int M>
__device__ __forceinline__ void part_stage_rows(double *tile, int ts, int cs, int G, int ls,
                                                const double *const *src, size_t s0, size_t st,
                                                int j1, int q, int step, int rows, int nmem) {
#pragma unroll
  for (int m = 0; m < M; m++) {
    const int jj = q + m * step;
    if (jj < rows && j1 + jj < nmem) {
      const int o = (jj / M) * cs + (jj % M) * G + ls;
#pragma unroll
      for (int k = 0; k < 4; k++)
        copy8_async(tile + k * ts + o, src[k] + s0 + (size_t)(j1 + jj) * st);
    }
  }
}

// Chunk q's M rows (global rows j0 ..) out of the staged tile of part_stage_rows (array stride
// ts, chunk stride cs) into registers: a dead lane's rows and rows from nmem on as 0/1/0/0.
template <int M>
__device__ __forceinline__ void part_tile_rows(const double *tile, int ts, int cs, int G, int ls,
                                               int q, bool live, int j0, int nmem, double (&a)[M],
                                               double (&b)[M], double (&c)[M], double (&d)[M]) {
#pragma unroll
  for (int i = 0; i < M; i++) {
    const bool in = live && j0 + i < nmem;
    const int o = q * cs + i * G + ls;
    a[i] = in ? tile[o] : 0.0;
    b[i] = in ? tile[ts + o] : 1.0;
    c[i] = in ? tile[2 * ts + o] : 0.0;
    d[i] = in ? tile[3 * ts + o] : 0.0;
  }
}

// PART with persistent blocks (gridDim.x <= groups; block b solves groups b, b + gridDim.x, ..):
// the rows of the next group are copied into shared memory (cp.async, 8 B per copy, no
// registers held) while the current group is solved from registers, so that a block keeps its
// SM's memory busy during the elimination, the reduced system and the stores (with one block
// per SM, which M = 16 at G K = 256 threads is, part_kernel leaves it idle then). Thread
// (ls, q) copies rows q + m K (m < M) of system ls of the next group and reads its own chunk's
// rows out of the tile. Same operations as part_kernel after the loads.
template <int M, int VAR, bool PCR>
__global__ void __launch_bounds__(PART_MAX_THREADS, 1)
    part_pipe_kernel(int n, int count, int blk, const int *__restrict__ sizes,
                     const double *__restrict__ A, const double *__restrict__ B,
                     const double *__restrict__ C, double *__restrict__ X) {
  extern __shared__ double sh[];
  const int G = blockDim.x, K = blockDim.y;
  const int ls = threadIdx.x, q = threadIdx.y;
  const int groups = (count + G - 1) / G;
  const int cs = part_pipe_stride(M, G), ts = K * cs; // chunk and array strides of the tile
  double *tile = sh, *red = sh + 4 * (size_t)ts;
  const size_t st = blk ? (size_t)blk : (size_t)count;
  const double *src[4] = {A, B, C, X};
  // copies group g's rows (those a solve reads) into the tile
  auto stage = [&](int g) {
    const int s = g * G + ls;
    if (s >= count)
      return;
    const int nmem = VAR == VAR_NCP ? __ldg(sizes + s) : n;
    const size_t s0 = blk ? (size_t)g * blk * n + (size_t)ls : (size_t)s;
    part_stage_rows<M>(tile, ts, cs, G, ls, src, s0, st, 0, q, K, nmem, nmem);
  };
  int g = blockIdx.x;
  if (g < groups)
    stage(g);
  copy_commit();
  for (; g < groups; g += gridDim.x) {
    const int s = g * G + ls;
    const bool live = s < count;
    const int ns = (VAR != VAR_NONE && live) ? sizes[s] : n;
    const int nmem = VAR == VAR_NCP ? ns : n;
    const size_t s0 = blk ? (size_t)g * blk * n + (size_t)ls : (size_t)s;
    copy_wait<0>();
    __syncthreads(); // the group's tile is complete
    double a[M], b[M], c[M], d[M];
    part_tile_rows<M>(tile, ts, cs, G, ls, q, live, q * M, nmem, a, b, c, d);
    __syncthreads(); // every thread has its rows: the tile takes the next group
    if (g + (int)gridDim.x < groups)
      stage(g + gridDim.x);
    copy_commit();
    part_solve<M, PCR>(ns, nmem, live, q, K, G, ls, s0, st, a, b, c, d, red, X);
  }
}

// PART in two halves of rows (pipeline = 3): persistent blocks of (G, Kh) threads, Kh =
// ceil(K / 2) chunks, that copy the rows of the next half-group into shared memory (cp.async)
// while solving the current one, as part_pipe_kernel does with whole groups. Half 0 (rows 0 ..
// n1 - 1, n1 = Kh M) is solved with its last row's coupling to z = x_{n1} kept open, x_j =
// U_j + z E_j, and U, E stay in shared memory (2 n1 G doubles). Half 1 (rows n1 .. n - 1)
// substitutes x_{n1-1} = U + z E into its first row (b += a E, d -= a U, a = 0: the Schur
// complement of half 0), is solved as a system of its own and stored; its first unknown is z,
// which finishes half 0 (stored last). A half holds n1 rows, so at 512 rows a block of 256
// threads holds G = 16 systems and each row access is 128 B wide (whole systems: G = 8, 64 B).
// Copies move 16 B (two systems of a row) when the row stride, G and the arrays allow, else 8 B.
template <int M, int VAR>
__global__ void __launch_bounds__(PART_MAX_THREADS, 1)
    part_split_kernel(int n, int count, int blk, const int *__restrict__ sizes,
                      const double *__restrict__ A, const double *__restrict__ B,
                      const double *__restrict__ C, double *__restrict__ X) {
  extern __shared__ double sh[];
  const int G = blockDim.x, Kh = blockDim.y;
  const int ls = threadIdx.x, q = threadIdx.y, tid = q * G + ls;
  const int n1 = Kh * M; // rows of half 0 (n1 < n: K >= 2)
  const int groups = (count + G - 1) / G;
  const int cs = part_pipe_stride(M, G), ts = Kh * cs;
  double *tile = sh, *ush = sh + 4 * (size_t)ts, *esh = ush + (size_t)n1 * G;
  double *red = esh + (size_t)n1 * G, *zsh = red + 7 * (size_t)Kh * G;
  const size_t st = blk ? (size_t)blk : (size_t)count;
  const double *src[4] = {A, B, C, X};
  const bool wide = VAR != VAR_NCP && G % 2 == 0 && (blk ? blk % 2 == 0 : count % 2 == 0) &&
                    (((uintptr_t)A | (uintptr_t)B | (uintptr_t)C | (uintptr_t)X) & 15) == 0;
  // copies the rows of half h of group g (those a solve reads) into the tile
  auto stage = [&](int g, int h) {
    const int j1 = h * n1, rows = h ? n - n1 : n1;
    if (wide) { // thread tid copies systems 2p, 2p + 1 of rows r0, r0 + 2 Kh, ..
      const int P = G / 2, p = tid % P, r0 = tid / P;
      const int s = g * G + 2 * p;
      if (s >= count)
        return;
      const size_t s0 = blk ? (size_t)g * blk * n + (size_t)(2 * p) : (size_t)s;
#pragma unroll
      for (int m = 0; m < M / 2; m++) {
        const int jj = r0 + m * 2 * Kh;
        if (jj < rows) {
          const int o = (jj / M) * cs + (jj % M) * G + 2 * p;
#pragma unroll
          for (int k = 0; k < 4; k++)
            copy16_async(tile + k * ts + o, src[k] + s0 + (size_t)(j1 + jj) * st);
        }
      }
    } else { // thread (ls, q) copies rows q, q + Kh, .. of system ls
      const int s = g * G + ls;
      if (s >= count)
        return;
      const int nmem = VAR == VAR_NCP ? __ldg(sizes + s) : n;
      const size_t s0 = blk ? (size_t)g * blk * n + (size_t)ls : (size_t)s;
      part_stage_rows<M>(tile, ts, cs, G, ls, src, s0, st, j1, q, Kh, rows, nmem);
    }
  };
  int g = blockIdx.x, h = 0;
  if (g < groups)
    stage(g, 0);
  copy_commit();
  while (g < groups) {
    const int s = g * G + ls;
    const bool live = s < count;
    const int ns = (VAR != VAR_NONE && live) ? sizes[s] : n;
    const int nmem = VAR == VAR_NCP ? ns : n;
    const size_t s0 = blk ? (size_t)g * blk * n + (size_t)ls : (size_t)s;
    const int j0 = h * n1 + q * M;
    copy_wait<0>();
    __syncthreads(); // the half's tile is complete
    double a[M], b[M], c[M], d[M];
    part_tile_rows<M>(tile, ts, cs, G, ls, q, live, j0, nmem, a, b, c, d);
    __syncthreads(); // every thread has its rows: the tile takes the next half
    if (h == 0)
      stage(g, 1);
    else if (g + (int)gridDim.x < groups)
      stage(g + gridDim.x, 0);
    copy_commit();
    part_rows<M>(ns, live, j0, a, b, c, d);
    if (h == 1 && q == 0 && live && n1 < ns) { // x_{n1-1} = U + z E into row n1
      const double u = ush[(n1 - 1) * G + ls], e = esh[(n1 - 1) * G + ls];
      b[0] = b[0] + a[0] * e;
      d[0] = d[0] - a[0] * u;
      a[0] = 0.0;
    }
    double a0, c0, d0, x0, xl, x0e, xle;
    part_eliminate<M>(a, b, c, d, a0, c0, d0);
    if (h == 0) {
      part_pcr<M, true>(q, Kh, G, ls, a, c, d, a0, c0, d0, red, x0, xl, x0e, xle);
      if (live)
#pragma unroll
        for (int i = 0; i < M; i++) {
          const int o = (q * M + i) * G + ls;
          ush[o] = part_row<M>(i, a, c, d, x0, xl);
          esh[o] = i == 0 ? x0e : (i == M - 1 ? xle : -(a[i] * x0e) - c[i] * xle);
        }
      h = 1;
    } else {
      part_pcr<M, false>(q, Kh, G, ls, a, c, d, a0, c0, d0, red, x0, xl, x0e, xle);
      if (live)
#pragma unroll
        for (int i = 0; i < M; i++)
          if (j0 + i < nmem)
            X[s0 + (size_t)(j0 + i) * st] = part_row<M>(i, a, c, d, x0, xl);
      if (q == 0)
        zsh[ls] = x0; // z = x_{n1}
      __syncthreads();
      if (live) {
        const double z = zsh[ls];
#pragma unroll
        for (int i = 0; i < M; i++) {
          const int jj = q * M + i, o = jj * G + ls;
          if (jj < nmem)
            X[s0 + (size_t)jj * st] = ush[o] + z * esh[o];
        }
      }
      h = 0;
      g += gridDim.x;
    }
  }
}

// ---- data helpers -------------------------------------------------------------------------------
__global__ void fill_random_kernel(int n, int count, const int *sizes, uint64_t seed, int layout,
                                   double *a, double *b, double *c, double *x) {
  const size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (size_t)n * (size_t)count)
    return;
  const int j = (int)(idx / (size_t)count), s = (int)(idx % (size_t)count);
  const int ns = sizes ? sizes[s] : n;
  double av, bv, cv, dv;
  se_tridiag_random_row(seed, (uint64_t)s, j, ns, &av, &bv, &cv, &dv);
  const size_t o = se_tridiag_index(layout, n, count, s, j);
  a[o] = av;
  b[o] = bv;
  c[o] = cv;
  x[o] = dv;
}

__global__ void relayout_kernel(int n, int count, int from, int to, const double *src,
                                double *dst) {
  const size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (size_t)n * (size_t)count)
    return;
  const int j = (int)(idx / (size_t)count), s = (int)(idx % (size_t)count);
  dst[se_tridiag_index(to, n, count, s, j)] = src[se_tridiag_index(from, n, count, s, j)];
}

// ---- configuration ---------------------------------------------------------------------------

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// SMs of the current device (132 on an H200), for the size heuristics.
int device_sms() {
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
    cudaGetLastError();
    return 132;
  }
  return sms;
}

// PART's configuration for (n, count), from the sweeps on the H200 (docs/gpu-tridiag.md):
// PCR for the reduced system. Interleaved layout: chunks of 8 rows up to 128 rows, else 16
// (fewer reduced rows), then as many systems per block as fit (G Kb <= 256 threads, G <= 16,
// Kb the chunks a block holds): a warp reads G consecutive systems of a row, and G >= 16
// (128 B) is what keeps DRAM near its copy rate. From 129 to 512 rows, with fixed sizes or CP
// and an even count (16-B aligned rows; odd counts: one group per block): from 257 rows and
// PART_SPLIT_GROUPS groups of 16 per SM, each system in two halves (pipe = 3, Kb = ceil(K / 2):
// G = 16 where whole systems allow 8); otherwise, from PART_STAGE_GROUPS groups per SM,
// persistent blocks that stage the next group in shared memory (pipe = 2), with G < 16 only
// below the two halves' threshold (above it G = 8 staged lost to one group per block). Block-
// interleaved layout (blocked =
// 1; a block reads one contiguous tile, whatever G is): chunks of 8 rows up to 256 rows, else
// 16, and G K <= 256 threads (<= 128 above 256 rows); above 256 rows staged (pipe = 2: 1.13-1.26x
// faster at 512 rows, 2560 to 256 000 systems). G halves while that leaves fewer blocks than SMs.
// m_in > 0, pipe_in != 0 and red_in != 0 impose M, the pipeline and the reduced solver (G then
// fits the imposed pipeline); ncp: variable sizes without compute padding (never staged).
void part_choose(int n, int count, int m_in, int pipe_in, int red_in, int blocked, int ncp,
                 int *M, int *G, int *pipe, int *reduced) {
  const long long sms = device_sms();
  *M = m_in > 0 ? m_in : (n <= (blocked ? 256 : 128) ? 8 : 16);
  const int K = ceil_div(n, *M);
  *reduced = red_in ? red_in : SE_TRIDIAG_REDUCED_PCR;
  const bool pcr = *reduced == SE_TRIDIAG_REDUCED_PCR;
  if (pipe_in)
    *pipe = pipe_in;
  else if (blocked)
    *pipe = n > 256 ? 2 : 1;
  else if (n > 256 && n <= 512 && K >= 2 && pcr && !ncp && count % 2 == 0 &&
           count >= PART_SPLIT_GROUPS * 16 * sms)
    *pipe = 3;
  else
    *pipe = 1;
  const int Kb = *pipe == 3 ? ceil_div(K, 2) : K;
  const int max_threads = blocked && n > 256 ? PART_MAX_THREADS / 2 : PART_MAX_THREADS;
  int g = 1;
  while (2 * g * Kb <= max_threads && g < 16)
    g *= 2;
  while (g > 1 && (long long)ceil_div(count, g) < sms)
    g /= 2;
  *G = g;
  if (!pipe_in && !blocked && *pipe == 1 && n > 128 && n <= 512 && !ncp && count % 2 == 0 &&
      count >= PART_STAGE_GROUPS * g * sms &&
      (g >= 16 || count < PART_SPLIT_GROUPS * 16 * sms))
    *pipe = 2;
}

// The PART kernel of a configuration (all take the same arguments).
typedef void (*part_fn)(int, int, int, const int *, const double *, const double *,
                        const double *, double *);

template <int M, int VAR>
part_fn part_pick(int pipe, bool pcr) {
  if (pipe == 3)
    return part_split_kernel<M, VAR>; // PCR only
  if (pipe == 2)
    return pcr ? part_pipe_kernel<M, VAR, true> : part_pipe_kernel<M, VAR, false>;
  return pcr ? part_kernel<M, VAR, true> : part_kernel<M, VAR, false>;
}

template <int M>
part_fn part_pick(int var, int pipe, bool pcr) {
  if (var == VAR_NONE)
    return part_pick<M, VAR_NONE>(pipe, pcr);
  if (var == VAR_CP)
    return part_pick<M, VAR_CP>(pipe, pcr);
  return part_pick<M, VAR_NCP>(pipe, pcr);
}

part_fn part_function(int M, int var, int pipe, bool pcr) {
  return M == 4 ? part_pick<4>(var, pipe, pcr)
                : (M == 8 ? part_pick<8>(var, pipe, pcr) : part_pick<16>(var, pipe, pcr));
}

const char *const method_names[SE_TRIDIAG_METHODS] = {
    "auto",         "thomas",      "thomas-reg",  "part",
    "cusparse-thomas", "cusparse-lu", "cusparse-qr", "cusparse-strided"};

} // namespace

struct se_tridiag {
  se_tridiag_method requested, method; // method: never AUTO
  int n, count, layout;
  const int *sizes;
  int compute_padding;
  cudaStream_t stream;
  int M, K, G, pipe, reduced; // PART (pipe: 1 = a group per block, 2 = persistent, staged,
                              // 3 = persistent, staged, each system in two halves)
  part_fn kernel;              // PART: the kernel, its grid, block and shared memory
  dim3 grid, block;
  size_t smem;
  double *work;         // THOMAS, THOMAS_REG: c'
  size_t work_bytes;
  cusparseHandle_t sp;
  void *buffer;
  size_t buffer_bytes;
};

extern "C" const char *se_tridiag_method_name(se_tridiag_method m) {
  return (unsigned)m < SE_TRIDIAG_METHODS ? method_names[m] : NULL;
}

extern "C" int se_tridiag_method_parse(const char *name) {
  for (int m = 0; m < SE_TRIDIAG_METHODS; m++)
    if (!strcmp(name, method_names[m]))
      return m;
  return -1;
}

static int is_cusparse(se_tridiag_method m) {
  return m >= SE_TRIDIAG_CUSPARSE_THOMAS && m <= SE_TRIDIAG_CUSPARSE_STRIDED;
}

extern "C" int se_tridiag_layout(const se_tridiag *t) { return t->layout; }

extern "C" int se_tridiag_block_size(int n, int count) {
  int M = 0, G = 0, pipe = 0, red = 0;
  part_choose(n, count, 0, 0, 0, 1, 0, &M, &G, &pipe, &red);
  return G;
}

extern "C" void se_tridiag_destroy(se_tridiag *t) {
  if (!t)
    return;
  cudaFree(t->work);
  cudaFree(t->buffer);
  if (t->sp)
    cusparseDestroy(t->sp);
  free(t);
}

// Resolves AUTO and PART's configuration and allocates the method's workspace.
static int configure(se_tridiag *t, const se_tridiag_options *opt, se_error *err) {
  const int B = opt->block_size;
  if (t->method == SE_TRIDIAG_AUTO || t->method == SE_TRIDIAG_PART) {
    int M = 0, G = 0, pipe = 0, red = 0;
    const int ncp = t->sizes && !t->compute_padding;
    part_choose(t->n, t->count, opt->rows_per_thread, opt->pipeline, opt->reduced, B > 0, ncp, &M,
                &G, &pipe, &red);
    if (B && !opt->rows_per_thread && M < 16 && (long long)B * ceil_div(t->n, M) > PART_MAX_THREADS)
      M = 16; // longer chunks, so that the imposed block of B systems fits
    if (B && opt->systems_per_block && opt->systems_per_block != B)
      SE_FAIL(err, SE_ERR_ARG,
              "part: %d systems per block on a block-interleaved layout of %d systems per block",
              opt->systems_per_block, B);
    if (B)
      G = B; // a CUDA block solves one block of the layout
    else if (opt->systems_per_block)
      G = opt->systems_per_block;
    if (opt->pipeline < 0 || opt->pipeline > 3)
      SE_FAIL(err, SE_ERR_ARG,
              "part: pipeline %d (0 = chosen, 1 = off, 2 = staged, 3 = staged in two halves)",
              opt->pipeline);
    if (M != 4 && M != 8 && M != 16)
      SE_FAIL(err, SE_ERR_ARG, "part: %d rows per thread (use 4, 8 or 16)", M);
    if (red != SE_TRIDIAG_REDUCED_PCR && red != SE_TRIDIAG_REDUCED_THOMAS)
      SE_FAIL(err, SE_ERR_ARG, "part: unknown reduced-system solver %d", red);
    const int K = ceil_div(t->n, M);
    if (pipe == 3 && (red != SE_TRIDIAG_REDUCED_PCR || K < 2)) // imposed: never chosen so
      SE_FAIL(err, SE_ERR_UNSUPPORTED,
              "part: two halves (pipeline 3) need PCR and at least 2 chunks (%d rows, M = %d)",
              t->n, M);
    const int Kb = pipe == 3 ? ceil_div(K, 2) : K; // chunks per CUDA block
    if (G < 1 || (long long)G * Kb > PART_MAX_THREADS) {
      if (t->method != SE_TRIDIAG_AUTO)
        SE_FAIL(err, SE_ERR_UNSUPPORTED,
                "part: %d systems x %d chunks of %d rows per block exceed %d threads (n = %d)", G,
                Kb, M, PART_MAX_THREADS, t->n);
      t->method = SE_TRIDIAG_THOMAS_REG; // the system does not fit one block's registers
    } else {
      // shared memory: the reduced system; staged: + the tile; two halves: the tile of a half,
      // U and E of half 0, the reduced system with its second right-hand side, z
      const size_t tile_bytes = 4u * (size_t)Kb * (size_t)part_pipe_stride(M, G) * sizeof(double);
      size_t smem = 6u * (size_t)K * (size_t)G * sizeof(double);
      if (pipe == 2)
        smem += tile_bytes;
      if (pipe == 3)
        smem = tile_bytes + (2u * (size_t)Kb * M * G + 7u * (size_t)Kb * G + G) * sizeof(double);
      if (pipe >= 2) {
        int dev = 0, smem_max = 0;
        SE_CUDA_CHECK(err, cudaGetDevice(&dev));
        SE_CUDA_CHECK(err, cudaDeviceGetAttribute(&smem_max,
                                                  cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        if (smem > (size_t)smem_max) {
          if (opt->pipeline >= 2)
            SE_FAIL(err, SE_ERR_UNSUPPORTED,
                    "part: the staged tile of %d systems x %d rows needs %zu B of shared "
                    "memory, the device gives a block %d B",
                    G, t->n, smem, smem_max);
          // chosen, not imposed: one group per block where the tile does not fit, with G for
          // whole systems (at most what two halves had)
          int m1 = 0, p1 = 0, r1 = 0, g1 = 0;
          part_choose(t->n, t->count, M, 1, red, B > 0, ncp, &m1, &g1, &p1, &r1);
          if (!B && !opt->systems_per_block && g1 < G)
            G = g1;
          pipe = 1;
          smem = 6u * (size_t)K * (size_t)G * sizeof(double);
        }
      }
      const int kb = pipe == 3 ? Kb : K; // chunks per CUDA block after a fallback
      if ((long long)G * kb > PART_MAX_THREADS)
        SE_FAIL(err, SE_ERR_UNSUPPORTED,
                "part: %d systems x %d chunks of %d rows per block exceed %d threads (n = %d)", G,
                kb, M, PART_MAX_THREADS, t->n);
      t->method = SE_TRIDIAG_PART;
      t->M = M;
      t->K = K;
      t->G = G;
      t->pipe = pipe;
      t->reduced = red;
      const int var = !t->sizes ? VAR_NONE : (t->compute_padding ? VAR_CP : VAR_NCP);
      t->kernel = part_function(M, var, pipe, red == SE_TRIDIAG_REDUCED_PCR);
      t->block = dim3((unsigned)G, (unsigned)kb);
      const int groups = ceil_div(t->count, G);
      t->smem = smem;
      t->grid = dim3((unsigned)groups);
      if (pipe >= 2) { // persistent grid: as many blocks as are resident at once
        int per_sm = 0;
        SE_CUDA_CHECK(err, cudaFuncSetAttribute((const void *)t->kernel,
                                                cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                (int)t->smem));
        SE_CUDA_CHECK(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                               &per_sm, (const void *)t->kernel, G * kb, t->smem));
        if (per_sm < 1)
          SE_FAIL(err, SE_ERR_UNSUPPORTED, "part: the staged kernel fits no SM (%d x %d threads)",
                  G, kb);
        const long long resident = (long long)per_sm * device_sms();
        if (resident < groups)
          t->grid = dim3((unsigned)resident);
      }
    }
  }
  if (t->method == SE_TRIDIAG_THOMAS || t->method == SE_TRIDIAG_THOMAS_REG) {
    const size_t bytes = se_tridiag_storage(t->layout, t->n, t->count) * sizeof(double);
    SE_CUDA_CHECK(err, cudaMalloc((void **)&t->work, bytes));
    t->work_bytes = bytes;
  }
  if (is_cusparse(t->method)) {
    SE_CUSPARSE_CHECK(err, cusparseCreate(&t->sp));
    SE_CUSPARSE_CHECK(err, cusparseSetStream(t->sp, t->stream));
  }
  return SE_OK;
}

extern "C" int se_tridiag_create(const se_tridiag_options *opt, int n, int count,
                                 const int *sizes, cudaStream_t stream, se_tridiag **out,
                                 se_error *err) {
  *out = NULL;
  if (!opt || (unsigned)opt->method >= SE_TRIDIAG_METHODS)
    SE_FAIL(err, SE_ERR_ARG, "unknown tridiagonal method %d", opt ? (int)opt->method : -1);
  if (n < 1 || count < 1)
    SE_FAIL(err, SE_ERR_ARG, "a batch of %d systems of %d rows: both must be positive", count,
            n);
  if ((size_t)n * (size_t)count > ((size_t)1 << 40))
    SE_FAIL(err, SE_ERR_ARG, "a batch of %d systems of %d rows is too large", count, n);
  if (opt->block_size < 0 || opt->block_size > 1024)
    SE_FAIL(err, SE_ERR_ARG, "block-interleaved layout of %d systems per block (1 .. 1024)",
            opt->block_size);
  if (sizes && is_cusparse(opt->method))
    SE_FAIL(err, SE_ERR_UNSUPPORTED,
            "%s solves fixed-size batches only (variable sizes: thomas, thomas-reg, part)",
            method_names[opt->method]);
  if (opt->block_size && is_cusparse(opt->method))
    SE_FAIL(err, SE_ERR_UNSUPPORTED, "%s has its own layout, not a block-interleaved one",
            method_names[opt->method]);
  if (opt->method == SE_TRIDIAG_CUSPARSE_STRIDED && n < 3)
    SE_FAIL(err, SE_ERR_UNSUPPORTED, "cusparse-strided needs at least 3 rows, not %d", n);
  se_tridiag *t = (se_tridiag *)calloc(1, sizeof *t);
  if (!t)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for a tridiagonal solver");
  t->requested = opt->method;
  t->method = opt->method;
  t->n = n;
  t->count = count;
  t->layout = opt->method == SE_TRIDIAG_CUSPARSE_STRIDED ? SE_TRIDIAG_LAYOUT_FLAT
                                                         : opt->block_size;
  t->sizes = sizes;
  t->compute_padding = opt->compute_padding ? 1 : 0;
  t->stream = stream;
  int rc = configure(t, opt, err);
  if (rc != SE_OK) {
    se_tridiag_destroy(t);
    return rc;
  }
  *out = t;
  return SE_OK;
}

extern "C" void se_tridiag_describe(const se_tridiag *t, char *buf, size_t size) {
  char lay[24] = "";
  if (t->layout > 0)
    snprintf(lay, sizeof lay, " blk=%d", t->layout);
  if (t->method == SE_TRIDIAG_PART)
    snprintf(buf, size, "part M=%d K=%d G=%d %s%s%s", t->M, t->K, t->G,
             t->reduced == SE_TRIDIAG_REDUCED_PCR ? "pcr" : "thomas",
             t->pipe == 2 ? " pipe" : (t->pipe == 3 ? " split" : ""), lay);
  else
    snprintf(buf, size, "%s%s", method_names[t->method], lay);
}

extern "C" size_t se_tridiag_workspace_bytes(const se_tridiag *t) {
  return t->work_bytes + t->buffer_bytes;
}

extern "C" int se_tridiag_reserve(se_tridiag *t, size_t bytes, se_error *err) {
  if (t->buffer && bytes <= t->buffer_bytes)
    return SE_OK;
  cudaFree(t->buffer);
  t->buffer = NULL;
  t->buffer_bytes = 0;
  SE_CUDA_CHECK(err, cudaMalloc(&t->buffer, bytes ? bytes : 16));
  t->buffer_bytes = bytes;
  return SE_OK;
}

// Checks that t is a cuSPARSE interleaved solver and (n, count) fits it; its algorithm.
static int shape_check(const se_tridiag *t, int n, int count, int *algo, se_error *err) {
  if (t->method < SE_TRIDIAG_CUSPARSE_THOMAS || t->method > SE_TRIDIAG_CUSPARSE_QR)
    SE_FAIL(err, SE_ERR_UNSUPPORTED,
            "batches of other shapes need a cuSPARSE interleaved method, not %s",
            method_names[t->method]);
  if (n < 1 || count < 1 || n > t->n || count > t->count)
    SE_FAIL(err, SE_ERR_ARG, "a batch of %d systems of %d rows on a solver of %d x %d", count, n,
            t->count, t->n);
  *algo = (int)t->method - (int)SE_TRIDIAG_CUSPARSE_THOMAS;
  return SE_OK;
}

extern "C" int se_tridiag_shape_buffer(se_tridiag *t, int n, int count, double *a, double *b,
                                       double *c, double *x, size_t *bytes, se_error *err) {
  int algo = 0;
  const int rc = shape_check(t, n, count, &algo, err);
  if (rc != SE_OK)
    return rc;
  *bytes = 0;
  SE_CUSPARSE_CHECK(err, cusparseDgtsvInterleavedBatch_bufferSizeExt(t->sp, algo, n, a, b, c, x,
                                                                     count, bytes));
  return SE_OK;
}

extern "C" int se_tridiag_solve_shape(se_tridiag *t, int n, int count, double *a, double *b,
                                      double *c, double *x, se_error *err) {
  size_t need = 0;
  int rc = se_tridiag_shape_buffer(t, n, count, a, b, c, x, &need, err);
  if (rc == SE_OK)
    rc = se_tridiag_reserve(t, need, err);
  if (rc != SE_OK)
    return rc;
  const int algo = (int)t->method - (int)SE_TRIDIAG_CUSPARSE_THOMAS; // checked above
  SE_CUSPARSE_CHECK(err,
                    cusparseDgtsvInterleavedBatch(t->sp, algo, n, a, b, c, x, count, t->buffer));
  return SE_OK;
}

extern "C" int se_tridiag_solve(se_tridiag *t, double *a, double *b, double *c, double *x,
                                se_error *err) {
  const int var = !t->sizes ? VAR_NONE : (t->compute_padding ? VAR_CP : VAR_NCP);
  const unsigned tgrid = (unsigned)ceil_div(t->count, 128);
  const int blk = t->layout > 0 ? t->layout : 0;
  switch (t->method) {
  case SE_TRIDIAG_THOMAS:
    if (var == VAR_NONE)
      thomas_plain_kernel<VAR_NONE><<<tgrid, 128, 0, t->stream>>>(t->n, t->count, blk, t->sizes,
                                                                  a, b, c, x, t->work);
    else if (var == VAR_CP)
      thomas_plain_kernel<VAR_CP><<<tgrid, 128, 0, t->stream>>>(t->n, t->count, blk, t->sizes, a,
                                                                b, c, x, t->work);
    else
      thomas_plain_kernel<VAR_NCP><<<tgrid, 128, 0, t->stream>>>(t->n, t->count, blk, t->sizes,
                                                                 a, b, c, x, t->work);
    SE_CUDA_CHECK_LAUNCH(err, "thomas_plain_kernel");
    return SE_OK;
  case SE_TRIDIAG_THOMAS_REG:
    if (var == VAR_NONE)
      thomas_reg_kernel<VAR_NONE><<<tgrid, 128, 0, t->stream>>>(t->n, t->count, blk, t->sizes, a,
                                                                b, c, x, t->work);
    else if (var == VAR_CP)
      thomas_reg_kernel<VAR_CP><<<tgrid, 128, 0, t->stream>>>(t->n, t->count, blk, t->sizes, a, b,
                                                              c, x, t->work);
    else
      thomas_reg_kernel<VAR_NCP><<<tgrid, 128, 0, t->stream>>>(t->n, t->count, blk, t->sizes, a,
                                                               b, c, x, t->work);
    SE_CUDA_CHECK_LAUNCH(err, "thomas_reg_kernel");
    return SE_OK;
  case SE_TRIDIAG_PART: {
    int n = t->n, count = t->count;
    const int *sizes = t->sizes;
    void *args[8] = {&n, &count, (void *)&blk, &sizes, &a, &b, &c, &x};
    SE_CUDA_CHECK(err, cudaLaunchKernel((const void *)t->kernel, t->grid, t->block, args, t->smem,
                                        t->stream));
    return SE_OK;
  }
  case SE_TRIDIAG_CUSPARSE_THOMAS:
  case SE_TRIDIAG_CUSPARSE_LU:
  case SE_TRIDIAG_CUSPARSE_QR:
    return se_tridiag_solve_shape(t, t->n, t->count, a, b, c, x, err);
  case SE_TRIDIAG_CUSPARSE_STRIDED: {
    size_t need = 0;
    SE_CUSPARSE_CHECK(err, cusparseDgtsv2StridedBatch_bufferSizeExt(t->sp, t->n, a, b, c, x,
                                                                    t->count, t->n, &need));
    const int rc = se_tridiag_reserve(t, need, err);
    if (rc != SE_OK)
      return rc;
    SE_CUSPARSE_CHECK(err, cusparseDgtsv2StridedBatch(t->sp, t->n, a, b, c, x, t->count, t->n,
                                                      t->buffer));
    return SE_OK;
  }
  default:
    SE_FAIL(err, SE_ERR_ARG, "unresolved tridiagonal method %d", (int)t->method);
  }
}

extern "C" int se_tridiag_fill_random(int n, int count, const int *sizes, uint64_t seed,
                                      int layout, double *a, double *b, double *c, double *x,
                                      cudaStream_t stream, se_error *err) {
  const size_t total = (size_t)n * (size_t)count;
  if (n < 1 || count < 1)
    SE_FAIL(err, SE_ERR_ARG, "a batch of %d systems of %d rows", count, n);
  const unsigned blocks = (unsigned)((total + 255) / 256);
  fill_random_kernel<<<blocks, 256, 0, stream>>>(n, count, sizes, seed, layout, a, b, c, x);
  SE_CUDA_CHECK_LAUNCH(err, "fill_random_kernel");
  return SE_OK;
}

extern "C" int se_tridiag_relayout(int n, int count, int from, int to, const double *src,
                                   double *dst, cudaStream_t stream, se_error *err) {
  const size_t total = (size_t)n * (size_t)count;
  if (n < 1 || count < 1)
    SE_FAIL(err, SE_ERR_ARG, "a batch of %d systems of %d rows", count, n);
  const unsigned blocks = (unsigned)((total + 255) / 256);
  relayout_kernel<<<blocks, 256, 0, stream>>>(n, count, from, to, src, dst);
  SE_CUDA_CHECK_LAUNCH(err, "relayout_kernel");
  return SE_OK;
}
