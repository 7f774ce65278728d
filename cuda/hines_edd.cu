// Exact Domain Decomposition of one large Hines matrix on the GPU (see hines_edd.h,
// src/hines_edd_plan.h and docs/edd.md).
#include "hines_edd.h"

#include <stdlib.h>
#include <string.h>

namespace {

constexpr int GRID_THREADS = 256;
// the tail's CTA: 512 threads, 256 for chains of 6 and 7 rows (registers)
template <int KC> struct tail_threads {
  static constexpr int value = KC >= 6 ? 256 : 512;
};
// grid kernels: CTAs of 256 threads per multiprocessor asked for (registers without spills):
// 4 for chains of up to 2 rows (64 registers), 3 up to 4 rows, 2 beyond
template <int KC> struct grid_ctas {
  static constexpr int value = KC <= 2 ? 4 : (KC <= 4 ? 3 : 2);
};
constexpr int SMEM_ROWS = 1600; // level L in shared memory up to this many rows (28 B a row)

// ---- kernels -----------------------------------------------------------------------------------

template <int KC, bool HAS_E>
__global__ void __launch_bounds__(GRID_THREADS, grid_ctas<KC>::value) down_kernel(const __grid_constant__ se_edd_view v) {
  const int32_t j = (int32_t)(blockIdx.x * blockDim.x + threadIdx.x);
  if (j < v.n_junctions)
    se_edd_down(&v, HAS_E, KC, j);
}

template <int KC, bool HAS_E>
__global__ void __launch_bounds__(GRID_THREADS, grid_ctas<KC>::value) up_kernel(const __grid_constant__ se_edd_view v) {
  const int32_t j = (int32_t)(blockIdx.x * blockDim.x + threadIdx.x);
  if (j < v.n_junctions)
    se_edd_up(&v, HAS_E, KC, j);
}

// Level l's view from a level table (the plan's on the host, its copy on the device); level 0
// reads and writes the solve's arrays.
__host__ __device__ __forceinline__ se_edd_view level_view(const se_edd_view *views, int l,
                                                           const double *d, const double *g,
                                                           double *r) {
  se_edd_view v = views[l];
  if (l == 0) {
    v.d = d;
    v.g = g;
    v.r = r;
  }
  return v;
}

// Levels l_begin .. L-1 down, the sweep of level L, the levels back up: one CTA.
// bottom_vals: D, G, R, Ed, Er of level L (NULL at L = 0: the solve's arrays).
template <int KC>
__global__ void __launch_bounds__(tail_threads<KC>::value, 1)
    tail_kernel(const se_edd_view *__restrict__ views, int l_begin, int L, const double *d,
                const double *g, double *r, int32_t nb, const int32_t *__restrict__ bparent,
                double *D, const double *G, double *R, const double *Ed, const double *Er,
                double *pivots, int use_smem) {
  const int t = threadIdx.x, T = blockDim.x;
  for (int l = l_begin; l < L; l++) {
    const se_edd_view v = level_view(views, l, d, g, r);
    for (int32_t j = t; j < v.n_junctions; j += T) {
      if (l == 0)
        se_edd_down(&v, 0, KC, j);
      else
        se_edd_down(&v, 1, KC, j);
    }
    __syncthreads();
  }
  if (L == 0) {
    D = const_cast<double *>(d);
    G = g;
    R = r;
    Ed = nullptr;
    Er = nullptr;
  }
  if (use_smem) {
    extern __shared__ double smem[];
    double *sd = smem, *sg = smem + nb, *sr = smem + 2 * (size_t)nb;
    int32_t *sp = reinterpret_cast<int32_t *>(smem + 3 * (size_t)nb);
    for (int32_t i = t; i < nb; i += T) {
      sd[i] = Ed ? D[i] - Ed[i] : D[i];
      sg[i] = G[i];
      sr[i] = Er ? R[i] + Er[i] : R[i];
      sp[i] = bparent[i];
    }
    __syncthreads();
    if (t == 0)
      se_edd_bottom(nb, sp, sd, sg, nullptr, nullptr, sr, sd);
    __syncthreads();
    for (int32_t i = t; i < nb; i += T)
      R[i] = sr[i];
  } else if (t == 0) {
    se_edd_bottom(nb, bparent, D, G, Ed, Er, R, pivots);
  }
  __syncthreads();
  for (int l = L - 1; l >= l_begin; l--) {
    const se_edd_view v = level_view(views, l, d, g, r);
    for (int32_t j = t; j < v.n_junctions; j += T) {
      if (l == 0)
        se_edd_up(&v, 0, KC, j);
      else
        se_edd_up(&v, 1, KC, j);
    }
    __syncthreads();
  }
}

} // namespace

struct se_hines_edd {
  cudaStream_t stream;
  se_hines_edd_gpu_options opt;
  int kc, levels, l_tail;
  int32_t n, n_bottom;
  se_edd_view *views;   // host [levels], level 0 without values
  se_edd_view *d_views; // device copy
  double **d_vals;      // host [5 (levels + 1)]: D, G, R, Ed, Er of each level >= 1 (device)
  int32_t *d_bparent;
  double *d_pivots;
  void **allocs;        // every device allocation
  int n_allocs, cap_allocs;
  int64_t bytes;
  // the CUDA graph of the last (d, g, r)
  cudaGraphExec_t exec;
  const double *gd, *gg;
  double *gr;
};

namespace {

int dev_alloc(se_hines_edd *e, void **ptr, size_t bytes, const char *what, se_error *err) {
  if (e->n_allocs == e->cap_allocs) {
    const int cap = e->cap_allocs ? 2 * e->cap_allocs : 64;
    void **grown = static_cast<void **>(realloc(e->allocs, (size_t)cap * sizeof *grown));
    if (!grown)
      SE_FAIL(err, SE_ERR_NOMEM, "EDD: out of host memory");
    e->allocs = grown;
    e->cap_allocs = cap;
  }
  const cudaError_t rc = cudaMalloc(ptr, bytes ? bytes : 8);
  if (rc != cudaSuccess)
    SE_FAIL(err, SE_ERR_CUDA, "cudaMalloc of %zu bytes for %s failed: %s (%s)", bytes, what,
            cudaGetErrorName(rc), cudaGetErrorString(rc));
  e->allocs[e->n_allocs++] = *ptr;
  e->bytes += (int64_t)bytes;
  return SE_OK;
}

template <typename T>
int upload(se_hines_edd *e, T **dst, const T *src, size_t count, const char *what,
           se_error *err) {
  *dst = nullptr;
  if (!count)
    return SE_OK;
  SE_TRY(dev_alloc(e, reinterpret_cast<void **>(dst), count * sizeof(T), what, err));
  SE_CUDA_CHECK(err, cudaMemcpy(*dst, src, count * sizeof(T), cudaMemcpyHostToDevice));
  return SE_OK;
}

template <int KC>
int launch_kc(se_hines_edd *e, const double *d, const double *g, double *r, se_error *err) {
  for (int l = 0; l < e->l_tail; l++) {
    const se_edd_view v = level_view(e->views, l, d, g, r);
    const unsigned blocks = (unsigned)((v.n_junctions + GRID_THREADS - 1) / GRID_THREADS);
    if (l == 0)
      down_kernel<KC, false><<<blocks, GRID_THREADS, 0, e->stream>>>(v);
    else
      down_kernel<KC, true><<<blocks, GRID_THREADS, 0, e->stream>>>(v);
    SE_CUDA_CHECK_LAUNCH(err, "EDD down_kernel");
  }
  const int L = e->levels;
  double *const *b = e->d_vals + 5 * L;
  const int use_smem = e->n_bottom <= SMEM_ROWS;
  const size_t smem = use_smem ? (size_t)e->n_bottom * 28 : 0;
  tail_kernel<KC><<<1, tail_threads<KC>::value, smem, e->stream>>>(
      e->d_views, e->l_tail, L, d, g, r, e->n_bottom, e->d_bparent, b[0], b[1], b[2], b[3], b[4],
      e->d_pivots, use_smem);
  SE_CUDA_CHECK_LAUNCH(err, "EDD tail_kernel");
  for (int l = e->l_tail - 1; l >= 0; l--) {
    const se_edd_view v = level_view(e->views, l, d, g, r);
    const unsigned blocks = (unsigned)((v.n_junctions + GRID_THREADS - 1) / GRID_THREADS);
    if (l == 0)
      up_kernel<KC, false><<<blocks, GRID_THREADS, 0, e->stream>>>(v);
    else
      up_kernel<KC, true><<<blocks, GRID_THREADS, 0, e->stream>>>(v);
    SE_CUDA_CHECK_LAUNCH(err, "EDD up_kernel");
  }
  return SE_OK;
}

int launch(se_hines_edd *e, const double *d, const double *g, double *r, se_error *err) {
  switch (e->kc) {
  case 1: return launch_kc<1>(e, d, g, r, err);
  case 2: return launch_kc<2>(e, d, g, r, err);
  case 3: return launch_kc<3>(e, d, g, r, err);
  case 4: return launch_kc<4>(e, d, g, r, err);
  case 5: return launch_kc<5>(e, d, g, r, err);
  case 6: return launch_kc<6>(e, d, g, r, err);
  default: return launch_kc<7>(e, d, g, r, err);
  }
}

} // namespace

extern "C" se_hines_edd_gpu_options se_hines_edd_gpu_options_default(void) {
  se_hines_edd_gpu_options o;
  o.tail_rows = 2048;
  o.use_graph = 1;
  return o;
}

extern "C" void se_hines_edd_destroy(se_hines_edd *e) {
  if (!e)
    return;
  if (e->exec)
    cudaGraphExecDestroy(e->exec);
  for (int i = 0; i < e->n_allocs; i++)
    cudaFree(e->allocs[i]);
  free(e->allocs);
  free(e->views);
  free(e->d_vals);
  free(e);
}

extern "C" int se_hines_edd_create(const se_hines_edd_plan *plan,
                                   const se_hines_edd_gpu_options *opt, cudaStream_t stream,
                                   se_hines_edd **out, se_error *err) {
  *out = nullptr;
  if (!plan)
    SE_FAIL(err, SE_ERR_ARG, "EDD: NULL plan");
  se_hines_edd_gpu_options o = opt ? *opt : se_hines_edd_gpu_options_default();
  if (o.tail_rows < 0)
    SE_FAIL(err, SE_ERR_ARG, "EDD: tail_rows = %d must be >= 0", (int)o.tail_rows);
  if (plan->opt.k < 2 || plan->opt.k > SE_EDD_KMAX)
    SE_FAIL(err, SE_ERR_ARG, "EDD: the plan's K = %d is out of range", plan->opt.k);
  se_hines_edd *e = static_cast<se_hines_edd *>(calloc(1, sizeof *e));
  if (!e)
    SE_FAIL(err, SE_ERR_NOMEM, "EDD: out of host memory");
  e->stream = stream;
  e->opt = o;
  e->kc = plan->opt.k - 1;
  e->levels = plan->levels;
  e->n = plan->n;
  e->n_bottom = plan->n_bottom;
  const int L = plan->levels;
  e->views = static_cast<se_edd_view *>(calloc((size_t)L + 1, sizeof *e->views));
  e->d_vals = static_cast<double **>(calloc(5 * ((size_t)L + 1), sizeof *e->d_vals));
  int rc = SE_OK;
  if (!e->views || !e->d_vals) {
    se_hines_edd_destroy(e);
    SE_FAIL(err, SE_ERR_NOMEM, "EDD: out of host memory");
  }
  static const char *names[5] = {"EDD level D", "EDD level G", "EDD level R", "EDD level Ed",
                                 "EDD level Er"};
  for (int l = 1; l <= L && rc == SE_OK; l++)
    for (int k = 0; k < 5 && rc == SE_OK; k++)
      rc = dev_alloc(e, reinterpret_cast<void **>(&e->d_vals[5 * l + k]),
                     (size_t)plan->lv[l - 1].n_junctions * sizeof(double), names[k], err);
  for (int l = 0; l < L && rc == SE_OK; l++) {
    const se_hines_edd_level *lv = &plan->lv[l];
    se_edd_view *v = &e->views[l];
    v->n_junctions = lv->n_junctions;
    int32_t *jnode = nullptr, *gl_off = nullptr, *gl = nullptr, *lnodes = nullptr;
    uint32_t *jinfo = nullptr;
    if ((rc = upload(e, &jnode, lv->jnode, (size_t)lv->n_junctions, "EDD junction rows", err)) ||
        (rc = upload(e, &jinfo, lv->jinfo, (size_t)lv->n_junctions, "EDD junction info", err)) ||
        (rc = upload(e, &gl_off, lv->gl_off, (size_t)lv->n_general + 1, "EDD link offsets",
                     err)) ||
        (rc = upload(e, &gl, lv->gl, 4 * (size_t)lv->n_links, "EDD links", err)) ||
        (rc = upload(e, &lnodes, lv->lnodes, (size_t)lv->n_list, "EDD chain rows", err)))
      break;
    v->jnode = jnode;
    v->jinfo = jinfo;
    v->gl_off = gl_off;
    v->gl = gl;
    v->lnodes = lnodes;
    if (l > 0) {
      double *const *a = e->d_vals + 5 * l;
      v->d = a[0];
      v->g = a[1];
      v->r = a[2];
      v->ed = a[3];
      v->er = a[4];
    }
    double *const *b = e->d_vals + 5 * (l + 1);
    v->dn = b[0];
    v->gn = b[1];
    v->rn = b[2];
    v->edn = b[3];
    v->ern = b[4];
  }
  if (rc == SE_OK)
    rc = upload(e, &e->d_views, e->views, (size_t)(L > 0 ? L : 1), "EDD level table", err);
  if (rc == SE_OK)
    rc = upload(e, &e->d_bparent, plan->bottom_parent, (size_t)plan->n_bottom,
                "EDD bottom tree", err);
  if (rc == SE_OK && plan->n_bottom > SMEM_ROWS)
    rc = dev_alloc(e, reinterpret_cast<void **>(&e->d_pivots),
                   (size_t)plan->n_bottom * sizeof(double), "EDD bottom pivots", err);
  // the uploads' DMA (legacy stream) done before the plan's stream (non-blocking) reads them
  if (rc == SE_OK && cudaDeviceSynchronize() != cudaSuccess)
    rc = se_error_set(err, SE_ERR_CUDA, __FILE__, __LINE__, __func__,
                      "waiting for the EDD plan's upload failed: %s",
                      cudaGetErrorString(cudaGetLastError()));
  if (rc != SE_OK) {
    se_hines_edd_destroy(e);
    return rc;
  }
  // the tail starts at the first level of at most tail_rows rows
  e->l_tail = L;
  for (int l = 0; l < L; l++)
    if (plan->lv[l].n_rows <= o.tail_rows) {
      e->l_tail = l;
      break;
    }
  *out = e;
  return SE_OK;
}

extern "C" int se_hines_edd_solve(se_hines_edd *e, const double *d, const double *g, double *r,
                                  se_error *err) {
  if (!e || !d || !g || !r)
    SE_FAIL(err, SE_ERR_ARG, "EDD solve: NULL object or array");
  if (!e->opt.use_graph || e->stream == 0)
    return launch(e, d, g, r, err);
  if (!e->exec || e->gd != d || e->gg != g || e->gr != r) {
    if (e->exec) {
      cudaGraphExecDestroy(e->exec);
      e->exec = nullptr;
    }
    SE_CUDA_CHECK(err, cudaStreamBeginCapture(e->stream, cudaStreamCaptureModeThreadLocal));
    const int rc = launch(e, d, g, r, err);
    cudaGraph_t graph = nullptr;
    const cudaError_t ce = cudaStreamEndCapture(e->stream, &graph);
    if (rc != SE_OK) {
      if (graph)
        cudaGraphDestroy(graph);
      return rc;
    }
    SE_CUDA_CHECK(err, ce);
    const cudaError_t ei = cudaGraphInstantiate(&e->exec, graph, 0);
    cudaGraphDestroy(graph);
    if (ei != cudaSuccess) {
      e->exec = nullptr;
      SE_FAIL(err, SE_ERR_CUDA, "cudaGraphInstantiate of %d EDD launches failed: %s (%s)",
              se_hines_edd_launches(e), cudaGetErrorName(ei), cudaGetErrorString(ei));
    }
    e->gd = d;
    e->gg = g;
    e->gr = r;
  }
  SE_CUDA_CHECK(err, cudaGraphLaunch(e->exec, e->stream));
  return SE_OK;
}

extern "C" int se_hines_edd_sync(se_hines_edd *e, se_error *err) {
  SE_CUDA_CHECK(err, cudaStreamSynchronize(e->stream));
  SE_CUDA_CHECK(err, cudaGetLastError());
  return SE_OK;
}

extern "C" cudaStream_t se_hines_edd_stream(const se_hines_edd *e) { return e->stream; }

extern "C" int se_hines_edd_launches(const se_hines_edd *e) { return 2 * e->l_tail + 1; }

extern "C" int se_hines_edd_tail_level(const se_hines_edd *e) { return e->l_tail; }

extern "C" int64_t se_hines_edd_device_bytes(const se_hines_edd *e) { return e->bytes; }
