// Multi-morphology Hines solves by branch levels, and the mono-morphology reference
// (see hines_branch.h and docs/gpu-tridiag.md).
#include "hines_branch.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tridiag_batch.h"

namespace {

constexpr int LANES = 32; // branches per group: one warp

// ---- kernels -----------------------------------------------------------------------------------

// The branch of this thread in lanes [lane_begin, lane_end) of a level: its length L (0 for an
// empty lane), its slot base (row k at base + LANES k) and the rows it runs, H (the group's
// height with compute padding, else L). False when the thread has no branch.
template <bool CP>
__device__ __forceinline__ bool level_branch(int64_t lane_begin, int64_t lane_end,
                                             const int32_t *__restrict__ len,
                                             const int32_t *__restrict__ gbase,
                                             const int32_t *__restrict__ ghgt, int64_t &bi, int &L,
                                             int64_t &base, int &H) {
  bi = lane_begin + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (bi >= lane_end)
    return false;
  L = len[bi];
  if (L == 0)
    return false;
  const int64_t grp = bi / LANES;
  base = (int64_t)gbase[grp] + (bi % LANES);
  H = CP ? ghgt[grp] : L;
  return true;
}

// Phase 1 of one level: fold the children into the tail, eliminate tail -> head, store the
// pivots and the head's contribution to its parent's tail. One thread per lane of the level.
template <bool CP, bool EXACT>
__global__ void __launch_bounds__(128)
    phase1_kernel(int64_t lane_begin, int64_t lane_end, const int32_t *__restrict__ len,
                  const int32_t *__restrict__ gbase, const int32_t *__restrict__ ghgt,
                  const int32_t *__restrict__ cbeg, const int32_t *__restrict__ child,
                  const double *__restrict__ g, double *__restrict__ d, double *__restrict__ r,
                  double2 *__restrict__ fold) {
  int64_t bi, base;
  int L, H;
  if (!level_branch<CP>(lane_begin, lane_end, len, gbase, ghgt, bi, L, base, H))
    return;
  const int64_t tail = base + (int64_t)LANES * (L - 1);
  double cd = d[tail], cr = r[tail];
  const int c1 = cbeg[bi + 1];
  for (int ci = cbeg[bi]; ci < c1; ci++) {
    const double2 f = fold[child[ci]];
    cd = cd - f.x;
    cr = cr + f.y;
  }
#pragma unroll 4
  for (int k = H - 1; k >= 1; k--) {
    const int64_t sk = base + (int64_t)LANES * k;
    const double gk = g[sk], dn = d[sk - LANES], rn = r[sk - LANES];
    if (!CP || k < L) {
      if (EXACT) {
        const double f = gk / cd;
        d[sk] = cd;
        r[sk] = cr;
        cd = dn - f * gk;
        cr = rn + f * cr;
      } else {
        const double w = 1.0 / cd, e = gk * w;
        d[sk] = e;
        r[sk] = cr * w;
        cd = dn - e * gk;
        cr = rn + e * cr;
      }
    }
  }
  const double g0 = g[base];
  if (EXACT) {
    const double f = g0 / cd;
    d[base] = cd;
    r[base] = cr;
    fold[bi] = make_double2(f * g0, f * cr);
  } else {
    const double w = 1.0 / cd, e = g0 * w;
    d[base] = e;
    r[base] = cr * w;
    fold[bi] = make_double2(e * g0, e * cr);
  }
}

// Phase 2 of one level: substitution head -> tail from the parent's tail value.
template <bool CP, bool EXACT>
__global__ void __launch_bounds__(128)
    phase2_kernel(int64_t lane_begin, int64_t lane_end, const int32_t *__restrict__ len,
                  const int32_t *__restrict__ gbase, const int32_t *__restrict__ ghgt,
                  const int32_t *__restrict__ ptail, const double *__restrict__ g,
                  const double *__restrict__ d, double *__restrict__ r) {
  int64_t bi, base;
  int L, H;
  if (!level_branch<CP>(lane_begin, lane_end, len, gbase, ghgt, bi, L, base, H))
    return;
  const int32_t pt = ptail[bi];
  double x;
  if (EXACT)
    x = pt >= 0 ? (r[base] + g[base] * r[pt]) / d[base] : r[base] / d[base];
  else
    x = pt >= 0 ? r[base] + d[base] * r[pt] : r[base];
  r[base] = x;
#pragma unroll 4
  for (int k = 1; k < H; k++) {
    const int64_t sk = base + (int64_t)LANES * k;
    const double dk = d[sk], rk = r[sk];
    const double gk = EXACT ? g[sk] : 0.0;
    if (!CP || k < L) {
      x = EXACT ? (rk + gk * x) / dk : rk + dk * x;
      r[sk] = x;
    }
  }
}

// ---- cuSPARSE backend (one level) ----
// Slot of row 0 of branch bi: its group's base, lane bi mod LANES.
__device__ __forceinline__ int64_t cus_branch_base(const int32_t *__restrict__ gbase, int64_t bi) {
  return (int64_t)gbase[bi / LANES] + (bi % LANES);
}

// Thread (s, k): row k of branch s of the level (lane lb + s) in the interleaved batch of
// cnt = 2 nb systems of n rows: system s solves A_B y = e_head, system nb + s A_B z = r_B, both
// with the tail's children folded in as phase1_kernel folds them. Rows past the branch: identity.
__global__ void __launch_bounds__(128)
    cus_gather_kernel(int64_t lb, int nb, int n, const int32_t *__restrict__ len,
                      const int32_t *__restrict__ gbase, const int32_t *__restrict__ cbeg,
                      const int32_t *__restrict__ child, const double2 *__restrict__ fold,
                      const double *__restrict__ g, const double *__restrict__ d,
                      const double *__restrict__ r, double *__restrict__ dl,
                      double *__restrict__ dm, double *__restrict__ du, double *__restrict__ x) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= nb)
    return;
  const int64_t bi = lb + s, base = cus_branch_base(gbase, bi);
  const int L = len[bi];
  const size_t cnt = 2 * (size_t)nb;
  for (int k = blockIdx.y; k < n; k += gridDim.y) {
    double a = 0.0, b = 1.0, c = 0.0, xy = 0.0, xz = 0.0;
    if (k < L) {
      const int64_t sk = base + (int64_t)LANES * k;
      a = k ? -g[sk] : 0.0;
      c = k + 1 < L ? -g[sk + LANES] : 0.0;
      b = d[sk];
      xz = r[sk];
      xy = k == 0 ? 1.0 : 0.0;
      if (k == L - 1)
        for (int ci = cbeg[bi]; ci < cbeg[bi + 1]; ci++) {
          const double2 f = fold[child[ci]];
          b = b - f.x;
          xz = xz + f.y;
        }
    }
    const size_t o = (size_t)k * cnt + (size_t)s, o2 = o + (size_t)nb;
    dl[o] = a;
    dl[o2] = a;
    dm[o] = b;
    dm[o2] = b;
    du[o] = c;
    du[o2] = c;
    x[o] = xy;
    x[o2] = xz;
  }
}

// After the level's solve: y to d, z to r; the head's Schur complement d' = 1/y_0,
// r' = z_0/y_0 and its contribution (f g_0, f r'), f = g_0/d', to the parent's tail.
__global__ void __launch_bounds__(128)
    cus_scatter_kernel(int64_t lb, int nb, const int32_t *__restrict__ len,
                       const int32_t *__restrict__ gbase, const double *__restrict__ g,
                       const double *__restrict__ x, double *__restrict__ d,
                       double *__restrict__ r, double2 *__restrict__ fold) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= nb)
    return;
  const int64_t bi = lb + s, base = cus_branch_base(gbase, bi);
  const int L = len[bi];
  const size_t cnt = 2 * (size_t)nb;
  for (int k = blockIdx.y; k < L; k += gridDim.y) {
    const size_t o = (size_t)k * cnt + (size_t)s;
    const double y = x[o], z = x[o + (size_t)nb];
    const int64_t sk = base + (int64_t)LANES * k;
    d[sk] = y;
    r[sk] = z;
    if (k == 0) {
      const double g0 = g[base], dp = 1.0 / y, rp = z / y, f = g0 / dp;
      fold[bi] = make_double2(f * g0, f * rp);
    }
  }
}

// Phase 2 of one level (not the roots): x = z + (g_head x_parent_tail) y, y in d, z in r.
__global__ void __launch_bounds__(128)
    cus_axpy_kernel(int64_t lb, int nb, const int32_t *__restrict__ len,
                    const int32_t *__restrict__ gbase, const int32_t *__restrict__ ptail,
                    const double *__restrict__ g, const double *__restrict__ d,
                    double *__restrict__ r) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= nb)
    return;
  const int64_t bi = lb + s, base = cus_branch_base(gbase, bi);
  const int L = len[bi];
  const double c = g[base] * r[ptail[bi]];
  for (int k = blockIdx.y; k < L; k += gridDim.y) {
    const int64_t sk = base + (int64_t)LANES * k;
    r[sk] = r[sk] + c * d[sk];
  }
}

// Mono-morphology reference: one thread per cell, the CPU path's operations; the values of the
// next compartment of an unbranched run stay in registers (carried), other parents are updated
// in memory in the CPU's order.
__global__ void __launch_bounds__(128)
    mono_kernel(int64_t n_groups, const int32_t *__restrict__ gmorph,
                const int32_t *__restrict__ gcount, const int64_t *__restrict__ gbase,
                const int64_t *__restrict__ moff, const int32_t *__restrict__ parent,
                const double *__restrict__ g, double *__restrict__ d, double *__restrict__ r) {
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t grp = t / LANES;
  const int lane = (int)(t % LANES);
  if (grp >= n_groups || lane >= gcount[grp])
    return;
  const int32_t m = gmorph[grp];
  const int64_t m0 = moff[m];
  const int n = (int)(moff[m + 1] - m0);
  const int32_t *P = parent + m0;
  const double *G = g + m0;
  const int64_t base = gbase[grp] + lane;
  bool carried = false;
  double cd = 0.0, cr = 0.0;
  for (int i = n - 1; i > 0; i--) {
    const int64_t si = base + (int64_t)LANES * i;
    double di, ri;
    if (carried) {
      di = cd;
      ri = cr;
      d[si] = di;
      r[si] = ri;
    } else {
      di = d[si];
      ri = r[si];
    }
    const int p = __ldg(P + i);
    const double gi = __ldg(G + i);
    const double f = gi / di;
    const int64_t sp = base + (int64_t)LANES * p;
    if (p == i - 1) {
      cd = d[sp] - f * gi;
      cr = r[sp] + f * ri;
      carried = true;
    } else {
      d[sp] = d[sp] - f * gi;
      r[sp] = r[sp] + f * ri;
      carried = false;
    }
  }
  const double d0 = carried ? cd : d[base], r0 = carried ? cr : r[base];
  double xprev = r0 / d0;
  r[base] = xprev;
  for (int i = 1; i < n; i++) {
    const int64_t si = base + (int64_t)LANES * i;
    const int p = __ldg(P + i);
    const double gi = __ldg(G + i);
    const double xp = p == i - 1 ? xprev : r[base + (int64_t)LANES * p];
    xprev = (r[si] + gi * xp) / d[si];
    r[si] = xprev;
  }
}

// ---- host helpers ------------------------------------------------------------------------------

template <typename T>
int upload(T **dev, const T *host, size_t n, cudaStream_t stream, se_error *err) {
  SE_CUDA_CHECK(err, cudaMalloc((void **)dev, (n ? n : 1) * sizeof(T)));
  if (n)
    SE_CUDA_CHECK(err, cudaMemcpyAsync(*dev, host, n * sizeof(T), cudaMemcpyHostToDevice, stream));
  return SE_OK;
}

} // namespace

struct se_hines_branch_plan {
  cudaStream_t stream;
  se_hines_branch_stats st;
  int32_t *slot_of;         // host [compartments]
  int64_t *lvl_group;       // host [levels + 1]: groups of level l are lvl_group[l] .. [l+1]-1
  int32_t *d_len, *d_gbase, *d_ghgt, *d_cbeg, *d_child, *d_ptail;
  double *d_g;
  double2 *d_fold;
  // cuSPARSE backend: per level (host) the batch rows (longest branch, >= 3) and branches; the
  // solver (its handle and buffer) of the current algorithm and the interleaved dl, d, du, x
  int32_t *lvl_rows, *lvl_nb;
  se_tridiag *cus;
  int cus_backend;
  double *cus_arr;
  size_t cus_level_rows; // largest rows x 2 branches over the levels: doubles per array
  // the CUDA graph of the last (d, r, mode)
  cudaGraphExec_t exec;
  double *gd, *gr;
  int gcp, gexact, gbackend;
};

extern "C" void se_hines_branch_plan_destroy(se_hines_branch_plan *p) {
  if (!p)
    return;
  if (p->exec)
    cudaGraphExecDestroy(p->exec);
  cudaFree(p->d_len);
  cudaFree(p->d_gbase);
  cudaFree(p->d_ghgt);
  cudaFree(p->d_cbeg);
  cudaFree(p->d_child);
  cudaFree(p->d_ptail);
  cudaFree(p->d_g);
  cudaFree(p->d_fold);
  se_tridiag_destroy(p->cus);
  cudaFree(p->cus_arr);
  free(p->slot_of);
  free(p->lvl_group);
  free(p->lvl_rows);
  free(p->lvl_nb);
  free(p);
}

// Host tables of the plan under construction.
struct build {
  int64_t C, B;
  int32_t *nchild, *onechild, *branch_of; // per compartment
  int64_t *b_head;                        // per branch: global head compartment
  int32_t *b_len, *b_level, *b_parent;    // per branch
  int64_t *order;                         // branches by (level, sort key)
  int64_t *lane_of;                       // per branch: lane index
  int32_t *len, *gbase, *ghgt, *cbeg, *child, *ptail; // per lane / group
  int64_t *lvl_count;                                 // per level: first branch in order
};

static void build_free(build *b) {
  free(b->nchild);
  free(b->onechild);
  free(b->branch_of);
  free(b->b_head);
  free(b->b_len);
  free(b->b_level);
  free(b->b_parent);
  free(b->order);
  free(b->lane_of);
  free(b->len);
  free(b->gbase);
  free(b->ghgt);
  free(b->cbeg);
  free(b->child);
  free(b->ptail);
  free(b->lvl_count);
}

#define SE_HB_ALLOC(err, ptr, n, what)                                                          \
  do {                                                                                          \
    size_t se_hb_n_ = (size_t)(n);                                                              \
    (ptr) = (decltype(ptr))calloc(se_hb_n_ ? se_hb_n_ : 1, sizeof(*(ptr)));                     \
    if (!(ptr))                                                                                 \
      SE_FAIL(err, SE_ERR_NOMEM, "out of memory allocating %zu x %zu bytes for %s", se_hb_n_,  \
              sizeof(*(ptr)), (what));                                                          \
  } while (0)

static int build_tables(se_hines_branch_plan *p, build *b, int64_t n_cells,
                        const int64_t *offsets, const int32_t *parent, int sort_by_length,
                        se_error *err) {
  const int64_t C = offsets[n_cells];
  b->C = C;
  if (offsets[0] != 0 || C < n_cells || C >= INT32_MAX)
    SE_FAIL(err, SE_ERR_UNSUPPORTED,
            "a branch-level plan holds 1 .. 2^31 - 1 compartments from offset 0 (offsets %lld .. "
            "%lld)",
            (long long)offsets[0], (long long)C);
  // validate and count children
  SE_HB_ALLOC(err, b->nchild, C, "child counts");
  SE_HB_ALLOC(err, b->onechild, C, "only children");
  SE_HB_ALLOC(err, b->branch_of, C, "branch of each compartment");
  int64_t B = 0;
  for (int64_t c = 0; c < n_cells; c++) {
    const int64_t o = offsets[c], n = offsets[c + 1] - o;
    if (n < 1 || n > INT32_MAX)
      SE_FAIL(err, SE_ERR_ARG, "cell %lld has %lld compartments", (long long)c, (long long)n);
    if (parent[o] != -1)
      SE_FAIL(err, SE_ERR_ARG, "cell %lld: compartment 0 has parent %d, not -1", (long long)c,
              parent[o]);
    for (int64_t i = 1; i < n; i++) {
      const int32_t pi = parent[o + i];
      if (pi < 0 || pi >= i)
        SE_FAIL(err, SE_ERR_ARG, "cell %lld: compartment %lld has parent %d (must be in 0..%lld)",
                (long long)c, (long long)i, pi, (long long)(i - 1));
      b->nchild[o + pi]++;
      b->onechild[o + pi] = (int32_t)i;
    }
    for (int64_t i = 0; i < n; i++)
      if (i == 0 || b->nchild[o + parent[o + i]] != 1)
        B++;
  }
  b->B = B;
  SE_HB_ALLOC(err, b->b_head, B, "branch heads");
  SE_HB_ALLOC(err, b->b_len, B, "branch lengths");
  SE_HB_ALLOC(err, b->b_level, B, "branch levels");
  SE_HB_ALLOC(err, b->b_parent, B, "branch parents");
  // branches in increasing head order: a head's parent branch already exists
  int64_t id = 0;
  int32_t levels = 0, max_len = 0;
  for (int64_t c = 0; c < n_cells; c++) {
    const int64_t o = offsets[c], n = offsets[c + 1] - o;
    for (int64_t i = 0; i < n; i++) {
      if (!(i == 0 || b->nchild[o + parent[o + i]] != 1))
        continue;
      int32_t L = 1;
      int64_t k = i;
      b->branch_of[o + k] = (int32_t)id;
      while (b->nchild[o + k] == 1) {
        k = b->onechild[o + k];
        b->branch_of[o + k] = (int32_t)id;
        L++;
      }
      b->b_head[id] = o + i;
      b->b_len[id] = L;
      if (i == 0) {
        b->b_parent[id] = -1;
        b->b_level[id] = 0;
      } else {
        const int32_t pb = b->branch_of[o + parent[o + i]];
        b->b_parent[id] = pb;
        b->b_level[id] = b->b_level[pb] + 1;
      }
      if (b->b_level[id] + 1 > levels)
        levels = b->b_level[id] + 1;
      if (L > max_len)
        max_len = L;
      id++;
    }
  }
  // order: by level (counting sort), then by decreasing length (stable counting sort) or by id
  SE_HB_ALLOC(err, b->order, B, "branch order");
  SE_HB_ALLOC(err, p->lvl_group, levels + 1, "level table");
  int64_t *key_count = NULL;
  SE_HB_ALLOC(err, b->lvl_count, levels + 1, "level counts");
  int64_t *lvl_count = b->lvl_count;
  for (int64_t i = 0; i < B; i++)
    lvl_count[b->b_level[i] + 1]++;
  for (int32_t l = 0; l < levels; l++)
    lvl_count[l + 1] += lvl_count[l];
  {
    int64_t *fill = (int64_t *)calloc((size_t)levels + 1, sizeof(int64_t));
    if (!fill)
      SE_FAIL(err, SE_ERR_NOMEM, "out of memory for the level fill counters");
    for (int64_t i = 0; i < B; i++) {
      const int32_t l = b->b_level[i];
      b->order[lvl_count[l] + fill[l]++] = i;
    }
    free(fill);
  }
  if (sort_by_length) {
    int64_t *tmp = (int64_t *)malloc((size_t)(B ? B : 1) * sizeof(int64_t));
    key_count = (int64_t *)calloc((size_t)max_len + 2, sizeof(int64_t));
    if (!tmp || !key_count) {
      free(tmp);
      free(key_count);
      SE_FAIL(err, SE_ERR_NOMEM, "out of memory sorting the branches by length");
    }
    for (int32_t l = 0; l < levels; l++) {
      const int64_t lo = lvl_count[l], hi = lvl_count[l + 1];
      memset(key_count, 0, ((size_t)max_len + 2) * sizeof(int64_t));
      for (int64_t k = lo; k < hi; k++) // key = max_len - len: longest first
        key_count[max_len - b->b_len[b->order[k]] + 1]++;
      for (int32_t v = 0; v <= max_len; v++)
        key_count[v + 1] += key_count[v];
      for (int64_t k = lo; k < hi; k++) {
        const int64_t br = b->order[k];
        tmp[lo + key_count[max_len - b->b_len[br]]++] = br;
      }
      memcpy(b->order + lo, tmp + lo, (size_t)(hi - lo) * sizeof(int64_t));
    }
    free(tmp);
    free(key_count);
  }
  // lanes and groups
  int64_t groups = 0;
  for (int32_t l = 0; l < levels; l++) {
    p->lvl_group[l] = groups;
    groups += (lvl_count[l + 1] - lvl_count[l] + LANES - 1) / LANES;
  }
  p->lvl_group[levels] = groups;
  const int64_t lanes = groups * LANES;
  SE_HB_ALLOC(err, b->lane_of, B, "lane of each branch");
  SE_HB_ALLOC(err, b->len, lanes, "lane lengths");
  SE_HB_ALLOC(err, b->ptail, lanes, "parent tails");
  SE_HB_ALLOC(err, b->cbeg, lanes + 1, "child ranges");
  SE_HB_ALLOC(err, b->child, B, "child lists");
  SE_HB_ALLOC(err, b->gbase, groups, "group bases");
  SE_HB_ALLOC(err, b->ghgt, groups, "group heights");
  for (int32_t l = 0; l < levels; l++)
    for (int64_t k = lvl_count[l]; k < lvl_count[l + 1]; k++) {
      const int64_t br = b->order[k], lane = p->lvl_group[l] * LANES + (k - lvl_count[l]);
      b->lane_of[br] = lane;
      b->len[lane] = b->b_len[br];
      if (b->b_len[br] > b->ghgt[lane / LANES])
        b->ghgt[lane / LANES] = b->b_len[br];
    }
  SE_HB_ALLOC(err, p->lvl_rows, levels, "level heights");
  SE_HB_ALLOC(err, p->lvl_nb, levels, "level branch counts");
  for (int32_t l = 0; l < levels; l++) {
    p->lvl_nb[l] = (int32_t)(lvl_count[l + 1] - lvl_count[l]);
    p->lvl_rows[l] = 3; // batches of at least 3 rows (gtsv2's minimum; kept for gtsvInterleaved)
    for (int64_t gi = p->lvl_group[l]; gi < p->lvl_group[l + 1]; gi++)
      if (b->ghgt[gi] > p->lvl_rows[l])
        p->lvl_rows[l] = b->ghgt[gi];
    p->st.cusparse_rows += (int64_t)p->lvl_nb[l] * p->lvl_rows[l];
  }
  int64_t slots = 0;
  for (int64_t gi = 0; gi < groups; gi++) {
    if (slots > INT32_MAX)
      break;
    b->gbase[gi] = (int32_t)slots;
    slots += (int64_t)b->ghgt[gi] * LANES;
  }
  if (slots > INT32_MAX)
    SE_FAIL(err, SE_ERR_UNSUPPORTED,
            "the branch-level plan of %lld cells needs more than 2^31 slots (32-bit slot "
            "indices); split the population",
            (long long)n_cells);
  // slots of the compartments: walk each branch from its head (local indices of the cell)
  SE_HB_ALLOC(err, p->slot_of, C, "slot map");
  for (int64_t c = 0; c < n_cells; c++) {
    const int64_t o = offsets[c], n = offsets[c + 1] - o;
    for (int64_t i = 0; i < n; i++) {
      if (!(i == 0 || b->nchild[o + parent[o + i]] != 1))
        continue;
      const int32_t br = b->branch_of[o + i];
      const int64_t lane = b->lane_of[br];
      const int64_t base = b->gbase[lane / LANES] + lane % LANES;
      int64_t k = i;
      for (int32_t r = 0;; r++) {
        p->slot_of[o + k] = (int32_t)(base + (int64_t)LANES * r);
        if (b->nchild[o + k] != 1)
          break;
        k = b->onechild[o + k];
      }
    }
  }
  // parent tails and child lists (children in decreasing head order: decreasing branch id)
  for (int64_t lane = 0; lane < lanes; lane++)
    b->ptail[lane] = -1;
  for (int64_t br = 0; br < B; br++)
    if (b->b_parent[br] >= 0)
      b->cbeg[b->lane_of[b->b_parent[br]] + 1]++;
  for (int64_t lane = 0; lane < lanes; lane++)
    b->cbeg[lane + 1] += b->cbeg[lane];
  {
    int32_t *fill = (int32_t *)calloc((size_t)(lanes ? lanes : 1), sizeof(int32_t));
    if (!fill)
      SE_FAIL(err, SE_ERR_NOMEM, "out of memory for the child lists");
    for (int64_t br = B - 1; br >= 0; br--) {
      const int32_t pb = b->b_parent[br];
      if (pb < 0)
        continue;
      const int64_t pl = b->lane_of[pb];
      b->child[b->cbeg[pl] + fill[pl]++] = (int32_t)b->lane_of[br];
    }
    free(fill);
  }
  for (int64_t c = 0; c < n_cells; c++) {
    const int64_t o = offsets[c], n = offsets[c + 1] - o;
    for (int64_t i = 1; i < n; i++)
      if (b->nchild[o + parent[o + i]] != 1)
        b->ptail[b->lane_of[b->branch_of[o + i]]] = p->slot_of[o + parent[o + i]];
  }
  p->st.cells = n_cells;
  p->st.compartments = C;
  p->st.branches = B;
  p->st.groups = groups;
  p->st.slots = slots;
  p->st.levels = levels;
  p->st.max_branch_length = max_len;
  return SE_OK;
}

extern "C" int se_hines_branch_plan_create(int64_t n_cells, const int64_t *offsets,
                                           const int32_t *parent, int sort_by_length,
                                           cudaStream_t stream, se_hines_branch_plan **out,
                                           se_error *err) {
  *out = NULL;
  if (n_cells < 1)
    SE_FAIL(err, SE_ERR_ARG, "a branch-level plan needs at least one cell, not %lld",
            (long long)n_cells);
  se_hines_branch_plan *p = (se_hines_branch_plan *)calloc(1, sizeof *p);
  if (!p)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for a branch-level plan");
  p->stream = stream;
  build b;
  memset(&b, 0, sizeof b);
  int rc = build_tables(p, &b, n_cells, offsets, parent, sort_by_length, err);
  if (rc == SE_OK) {
    const int64_t lanes = p->st.groups * LANES;
    rc = upload(&p->d_len, b.len, (size_t)lanes, stream, err);
    if (rc == SE_OK)
      rc = upload(&p->d_gbase, b.gbase, (size_t)p->st.groups, stream, err);
    if (rc == SE_OK)
      rc = upload(&p->d_ghgt, b.ghgt, (size_t)p->st.groups, stream, err);
    if (rc == SE_OK)
      rc = upload(&p->d_cbeg, b.cbeg, (size_t)lanes + 1, stream, err);
    if (rc == SE_OK)
      rc = upload(&p->d_child, b.child, (size_t)p->st.branches, stream, err);
    if (rc == SE_OK)
      rc = upload(&p->d_ptail, b.ptail, (size_t)lanes, stream, err);
    if (rc == SE_OK) {
      cudaError_t e = cudaMalloc((void **)&p->d_fold, (size_t)(lanes ? lanes : 1) * sizeof(double2));
      if (e == cudaSuccess)
        e = cudaMalloc((void **)&p->d_g, (size_t)(p->st.slots ? p->st.slots : 1) * sizeof(double));
      if (e == cudaSuccess)
        e = cudaMemsetAsync(p->d_g, 0, (size_t)p->st.slots * sizeof(double), stream);
      if (e == cudaSuccess)
        e = cudaStreamSynchronize(stream);
      if (e != cudaSuccess)
        rc = se_error_set(err, SE_ERR_CUDA, __FILE__, __LINE__, __func__,
                          "allocating the plan's device tables failed: %s (%s)",
                          cudaGetErrorName(e), cudaGetErrorString(e));
    }
  }
  build_free(&b);
  if (rc != SE_OK) {
    se_hines_branch_plan_destroy(p);
    return rc;
  }
  *out = p;
  return SE_OK;
}

extern "C" void se_hines_branch_plan_stats(const se_hines_branch_plan *p,
                                           se_hines_branch_stats *st) {
  *st = p->st;
}

extern "C" const int32_t *se_hines_branch_slot_map(const se_hines_branch_plan *p) {
  return p->slot_of;
}

extern "C" int64_t se_hines_branch_slots(const se_hines_branch_plan *p) { return p->st.slots; }

extern "C" int se_hines_branch_set_coupling(se_hines_branch_plan *p, const double *g,
                                            se_error *err) {
  const int64_t S = p->st.slots, C = p->st.compartments;
  double *h = (double *)calloc((size_t)(S ? S : 1), sizeof(double));
  if (!h)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for %lld coupling slots", (long long)S);
  for (int64_t i = 0; i < C; i++)
    h[p->slot_of[i]] = g[i];
  cudaError_t e = cudaMemcpy(p->d_g, h, (size_t)S * sizeof(double), cudaMemcpyHostToDevice);
  free(h);
  if (e == cudaSuccess) /* its DMA done before the plan's (non-blocking) stream uses it */
    e = cudaDeviceSynchronize();
  if (e != cudaSuccess)
    SE_FAIL(err, SE_ERR_CUDA, "uploading the coupling failed: %s (%s)", cudaGetErrorName(e),
            cudaGetErrorString(e));
  return SE_OK;
}

// The launches of one solve: phase 1 deepest -> root, phase 2 root -> deepest.
template <bool CP, bool EXACT>
static int launch_levels(se_hines_branch_plan *p, double *d, double *r, se_error *err) {
  const int T = 128;
  for (int32_t l = p->st.levels - 1; l >= 0; l--) {
    const int64_t lb = p->lvl_group[l] * LANES, le = p->lvl_group[l + 1] * LANES;
    if (le == lb)
      continue;
    const unsigned blocks = (unsigned)((le - lb + T - 1) / T);
    phase1_kernel<CP, EXACT><<<blocks, T, 0, p->stream>>>(lb, le, p->d_len, p->d_gbase, p->d_ghgt,
                                                          p->d_cbeg, p->d_child, p->d_g, d, r,
                                                          p->d_fold);
    SE_CUDA_CHECK_LAUNCH(err, "phase1_kernel");
  }
  for (int32_t l = 0; l < p->st.levels; l++) {
    const int64_t lb = p->lvl_group[l] * LANES, le = p->lvl_group[l + 1] * LANES;
    if (le == lb)
      continue;
    const unsigned blocks = (unsigned)((le - lb + T - 1) / T);
    phase2_kernel<CP, EXACT><<<blocks, T, 0, p->stream>>>(lb, le, p->d_len, p->d_gbase, p->d_ghgt,
                                                          p->d_ptail, p->d_g, d, r);
    SE_CUDA_CHECK_LAUNCH(err, "phase2_kernel");
  }
  return SE_OK;
}

// The cuSPARSE backend's workspace for the algorithm of `backend`, allocated on first use: the
// interleaved arrays of the largest level and one solver whose buffer holds the largest need.
static int cusparse_prepare(se_hines_branch_plan *p, int backend, se_error *err) {
  if (p->cus && p->cus_backend == backend)
    return SE_OK;
  if (p->exec) { // a captured graph may hold the old solver's buffer
    cudaGraphExecDestroy(p->exec);
    p->exec = NULL;
  }
  se_tridiag_destroy(p->cus);
  p->cus = NULL;
  int max_rows = 0, max_count = 0;
  size_t max_level = 0;
  for (int32_t l = 0; l < p->st.levels; l++) {
    const size_t rows = (size_t)p->lvl_rows[l] * 2u * (size_t)p->lvl_nb[l];
    if (2ll * p->lvl_nb[l] > INT_MAX || rows > (size_t)INT_MAX)
      SE_FAIL(err, SE_ERR_UNSUPPORTED,
              "level %d: a cuSPARSE batch of 2 x %d branches x %d rows passes 2^31 - 1 rows "
              "(cuSPARSE takes int sizes); split the population",
              l, p->lvl_nb[l], p->lvl_rows[l]);
    max_rows = p->lvl_rows[l] > max_rows ? p->lvl_rows[l] : max_rows;
    max_count = 2 * p->lvl_nb[l] > max_count ? 2 * p->lvl_nb[l] : max_count;
    max_level = rows > max_level ? rows : max_level;
  }
  if (!p->cus_arr) {
    SE_CUDA_CHECK(err, cudaMalloc((void **)&p->cus_arr, 4 * max_level * sizeof(double)));
    p->cus_level_rows = max_level;
  }
  se_tridiag_options opt;
  memset(&opt, 0, sizeof opt);
  opt.method = (se_tridiag_method)(SE_TRIDIAG_CUSPARSE_THOMAS + (backend - 1));
  int rc = se_tridiag_create(&opt, max_rows, max_count, NULL, p->stream, &p->cus, err);
  size_t need = 0;
  double *a = p->cus_arr, *b = a + max_level, *c = b + max_level, *x = c + max_level;
  for (int32_t l = 0; rc == SE_OK && l < p->st.levels; l++) {
    size_t bytes = 0;
    rc = se_tridiag_shape_buffer(p->cus, p->lvl_rows[l], 2 * p->lvl_nb[l], a, b, c, x, &bytes,
                                 err);
    need = bytes > need ? bytes : need;
  }
  if (rc == SE_OK)
    rc = se_tridiag_reserve(p->cus, need, err);
  if (rc != SE_OK) {
    se_tridiag_destroy(p->cus);
    p->cus = NULL;
    return rc;
  }
  p->cus_backend = backend;
  return SE_OK;
}

// The launches of one cuSPARSE solve (workspace prepared): per level deepest -> 0 gather, the
// batch, scatter; then the axpy of levels 1 -> deepest.
static int launch_cusparse(se_hines_branch_plan *p, double *d, double *r, se_error *err) {
  const int T = 128;
  const size_t N = p->cus_level_rows;
  double *a = p->cus_arr, *b = a + N, *c = b + N, *x = c + N;
  for (int32_t l = p->st.levels - 1; l >= 0; l--) {
    const int64_t lb = p->lvl_group[l] * LANES;
    const int nb = p->lvl_nb[l], n = p->lvl_rows[l];
    const dim3 grid((unsigned)((nb + T - 1) / T), (unsigned)(n < 65535 ? n : 65535));
    cus_gather_kernel<<<grid, T, 0, p->stream>>>(lb, nb, n, p->d_len, p->d_gbase, p->d_cbeg,
                                                 p->d_child, p->d_fold, p->d_g, d, r, a, b, c, x);
    SE_CUDA_CHECK_LAUNCH(err, "cus_gather_kernel");
    const int rc = se_tridiag_solve_shape(p->cus, n, 2 * nb, a, b, c, x, err);
    if (rc != SE_OK)
      return rc;
    cus_scatter_kernel<<<grid, T, 0, p->stream>>>(lb, nb, p->d_len, p->d_gbase, p->d_g, x, d, r,
                                                  p->d_fold);
    SE_CUDA_CHECK_LAUNCH(err, "cus_scatter_kernel");
  }
  for (int32_t l = 1; l < p->st.levels; l++) {
    const int64_t lb = p->lvl_group[l] * LANES;
    const int nb = p->lvl_nb[l], n = p->lvl_rows[l];
    const dim3 grid((unsigned)((nb + T - 1) / T), (unsigned)(n < 65535 ? n : 65535));
    cus_axpy_kernel<<<grid, T, 0, p->stream>>>(lb, nb, p->d_len, p->d_gbase, p->d_ptail, p->d_g,
                                               d, r);
    SE_CUDA_CHECK_LAUNCH(err, "cus_axpy_kernel");
  }
  return SE_OK;
}

static int launch_mode(se_hines_branch_plan *p, double *d, double *r, int cp, int exact,
                       int backend, se_error *err) {
  if (backend)
    return launch_cusparse(p, d, r, err);
  if (cp)
    return exact ? launch_levels<true, true>(p, d, r, err) : launch_levels<true, false>(p, d, r, err);
  return exact ? launch_levels<false, true>(p, d, r, err) : launch_levels<false, false>(p, d, r, err);
}

extern "C" int se_hines_branch_solve(se_hines_branch_plan *p, double *d, double *r,
                                     const se_hines_branch_mode *mode, se_error *err) {
  const int backend = mode->backend;
  if (backend < 0 || backend >= SE_HINES_BRANCH_BACKENDS)
    SE_FAIL(err, SE_ERR_ARG, "unknown branch-level backend %d (0 .. %d)", backend,
            SE_HINES_BRANCH_BACKENDS - 1);
  const int cp = backend || !mode->compute_padding ? 0 : 1, exact = backend || !mode->exact ? 0 : 1;
  if (backend) {
    const int rc = cusparse_prepare(p, backend, err); // before any capture: it allocates
    if (rc != SE_OK)
      return rc;
  }
  if (!mode->use_graph || p->stream == 0)
    return launch_mode(p, d, r, cp, exact, backend, err);
  if (!p->exec || p->gd != d || p->gr != r || p->gcp != cp || p->gexact != exact ||
      p->gbackend != backend) {
    if (p->exec) {
      cudaGraphExecDestroy(p->exec);
      p->exec = NULL;
    }
    SE_CUDA_CHECK(err, cudaStreamBeginCapture(p->stream, cudaStreamCaptureModeThreadLocal));
    const int rc = launch_mode(p, d, r, cp, exact, backend, err);
    cudaGraph_t graph = NULL;
    const cudaError_t e = cudaStreamEndCapture(p->stream, &graph);
    if (rc != SE_OK) {
      if (graph)
        cudaGraphDestroy(graph);
      return rc;
    }
    SE_CUDA_CHECK(err, e);
    const cudaError_t ei = cudaGraphInstantiate(&p->exec, graph, 0);
    cudaGraphDestroy(graph);
    if (ei != cudaSuccess) {
      p->exec = NULL;
      SE_FAIL(err, SE_ERR_CUDA, "cudaGraphInstantiate of %d level launches failed: %s (%s)",
              2 * p->st.levels, cudaGetErrorName(ei), cudaGetErrorString(ei));
    }
    p->gd = d;
    p->gr = r;
    p->gcp = cp;
    p->gexact = exact;
    p->gbackend = backend;
  }
  SE_CUDA_CHECK(err, cudaGraphLaunch(p->exec, p->stream));
  return SE_OK;
}

// ---- mono-morphology reference ----------------------------------------------------------------

struct se_hines_monoref {
  cudaStream_t stream;
  int64_t n_groups, slots;
  int64_t *first_group;  // host [n_morph]: first group of each morphology
  int64_t *cell_rank;    // host [n_cells]: rank of the cell among its morphology's cells
  int32_t *cell_morph;   // host copy
  int64_t *gbase;        // host [n_groups]
  int64_t *moff;         // host copy of the offsets
  int32_t *d_gmorph, *d_gcount, *d_parent;
  int64_t *d_gbase, *d_moff;
  double *d_g;
};

extern "C" void se_hines_monoref_destroy(se_hines_monoref *m) {
  if (!m)
    return;
  cudaFree(m->d_gmorph);
  cudaFree(m->d_gcount);
  cudaFree(m->d_parent);
  cudaFree(m->d_gbase);
  cudaFree(m->d_moff);
  cudaFree(m->d_g);
  free(m->first_group);
  free(m->cell_rank);
  free(m->cell_morph);
  free(m->gbase);
  free(m->moff);
  free(m);
}

static int mono_build(se_hines_monoref *m, int32_t n_morph, const int64_t *moff,
                      const int32_t *parent, const double *g, int64_t n_cells,
                      const int32_t *cell_morph, se_error *err) {
  int64_t *per = NULL;
  int32_t *gmorph = NULL, *gcount = NULL;
  int rc = SE_OK;
  SE_HB_ALLOC(err, per, n_morph, "cells per morphology");
  SE_HB_ALLOC(err, m->first_group, n_morph + 1, "first groups");
  SE_HB_ALLOC(err, m->cell_rank, n_cells, "cell ranks");
  SE_HB_ALLOC(err, m->cell_morph, n_cells, "cell morphologies");
  SE_HB_ALLOC(err, m->moff, n_morph + 1, "morphology offsets");
  memcpy(m->moff, moff, ((size_t)n_morph + 1) * sizeof(int64_t));
  for (int32_t k = 0; k < n_morph; k++)
    if (moff[k + 1] - moff[k] < 1 || parent[moff[k]] != -1) {
      free(per);
      SE_FAIL(err, SE_ERR_ARG, "morphology %d: empty or compartment 0 not a root", k);
    }
  for (int64_t c = 0; c < n_cells; c++) {
    const int32_t k = cell_morph[c];
    if (k < 0 || k >= n_morph) {
      free(per);
      SE_FAIL(err, SE_ERR_ARG, "cell %lld has morphology %d of %d", (long long)c, k, n_morph);
    }
    m->cell_morph[c] = k;
    m->cell_rank[c] = per[k]++;
  }
  int64_t groups = 0;
  for (int32_t k = 0; k < n_morph; k++) {
    m->first_group[k] = groups;
    groups += (per[k] + LANES - 1) / LANES;
  }
  m->first_group[n_morph] = groups;
  m->n_groups = groups;
  SE_HB_ALLOC(err, m->gbase, groups, "group bases");
  gmorph = (int32_t *)calloc((size_t)(groups ? groups : 1), sizeof(int32_t));
  gcount = (int32_t *)calloc((size_t)(groups ? groups : 1), sizeof(int32_t));
  if (!gmorph || !gcount) {
    free(per);
    free(gmorph);
    free(gcount);
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for %lld groups", (long long)groups);
  }
  int64_t slots = 0;
  for (int32_t k = 0; k < n_morph; k++)
    for (int64_t gi = m->first_group[k]; gi < m->first_group[k + 1]; gi++) {
      gmorph[gi] = k;
      const int64_t left = per[k] - (gi - m->first_group[k]) * LANES;
      gcount[gi] = (int32_t)(left < LANES ? left : LANES);
      m->gbase[gi] = slots;
      slots += (moff[k + 1] - moff[k]) * LANES;
    }
  m->slots = slots;
  const int64_t C = moff[n_morph];
  rc = upload(&m->d_gmorph, gmorph, (size_t)groups, m->stream, err);
  if (rc == SE_OK)
    rc = upload(&m->d_gcount, gcount, (size_t)groups, m->stream, err);
  if (rc == SE_OK)
    rc = upload(&m->d_gbase, m->gbase, (size_t)groups, m->stream, err);
  if (rc == SE_OK)
    rc = upload(&m->d_moff, moff, (size_t)n_morph + 1, m->stream, err);
  if (rc == SE_OK)
    rc = upload(&m->d_parent, parent, (size_t)C, m->stream, err);
  if (rc == SE_OK)
    rc = upload(&m->d_g, g, (size_t)C, m->stream, err);
  if (rc == SE_OK) {
    const cudaError_t e = cudaStreamSynchronize(m->stream);
    if (e != cudaSuccess)
      rc = se_error_set(err, SE_ERR_CUDA, __FILE__, __LINE__, __func__,
                        "uploading the mono tables failed: %s", cudaGetErrorString(e));
  }
  free(per);
  free(gmorph);
  free(gcount);
  return rc;
}

extern "C" int se_hines_monoref_create(int32_t n_morph, const int64_t *morph_offsets,
                                    const int32_t *parent, const double *g, int64_t n_cells,
                                    const int32_t *cell_morph, cudaStream_t stream,
                                    se_hines_monoref **out, se_error *err) {
  *out = NULL;
  if (n_morph < 1 || n_cells < 1)
    SE_FAIL(err, SE_ERR_ARG, "%d morphologies and %lld cells: both must be positive", n_morph,
            (long long)n_cells);
  se_hines_monoref *m = (se_hines_monoref *)calloc(1, sizeof *m);
  if (!m)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for the mono reference");
  m->stream = stream;
  const int rc = mono_build(m, n_morph, morph_offsets, parent, g, n_cells, cell_morph, err);
  if (rc != SE_OK) {
    se_hines_monoref_destroy(m);
    return rc;
  }
  *out = m;
  return SE_OK;
}

extern "C" int64_t se_hines_monoref_slots(const se_hines_monoref *m) { return m->slots; }

extern "C" int64_t se_hines_monoref_slot(const se_hines_monoref *m, int64_t c, int32_t i) {
  const int32_t k = m->cell_morph[c];
  const int64_t rank = m->cell_rank[c];
  const int64_t gi = m->first_group[k] + rank / LANES;
  return m->gbase[gi] + (int64_t)LANES * i + rank % LANES;
}

extern "C" int se_hines_monoref_solve(se_hines_monoref *m, double *d, double *r, se_error *err) {
  const int T = 128;
  const int64_t threads = m->n_groups * LANES;
  const unsigned blocks = (unsigned)((threads + T - 1) / T);
  mono_kernel<<<blocks, T, 0, m->stream>>>(m->n_groups, m->d_gmorph, m->d_gcount, m->d_gbase,
                                           m->d_moff, m->d_parent, m->d_g, d, r);
  SE_CUDA_CHECK_LAUNCH(err, "mono_kernel");
  return SE_OK;
}
