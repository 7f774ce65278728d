// The COOP kernel: batched mono-morphology Hines solves with several threads per system
// (hines_coop.h, docs/gpu-hines.md "The COOP kernel").
//
// The lane code is __host__ __device__, written as segments between the warp's synchronisation
// points, so se_hines_coop_emulate runs the same code (plan, copies, shared-memory layout) on the
// host lane after lane.
#include <string.h>

#include <algorithm>
#include <new>
#include <vector>

#include "hines_coop.h"
#include "async_copy.cuh"
#include "se_cuda.h"
#include "se_error.h"

namespace {

// ---------------------------------------------------------------------------------------------
// Device helpers with host fallbacks (the copies: async_copy.cuh).

// Reciprocal without a branch: the hardware approximation, then the fast path of __drcp_rn
// (a cubic and a Newton step, fused multiply-adds), without its slow-path test for results near
// the ends of the exponent range (the pivots of a Hines matrix are far from them). Within
// rounding of the correctly rounded 1 / x (the host's value); a branch would keep independent
// rows from interleaving.
SE_HD inline double recip(double x) {
#ifdef __CUDA_ARCH__
  double y;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  double e = fma(-x, y, 1.0);
  e = fma(e, e, e);
  y = fma(y, e, y);
  e = fma(-x, y, 1.0);
  return fma(y, e, y);
#else
  return 1.0 / x;
#endif
}

// ---------------------------------------------------------------------------------------------
// The plan.
//
// Each row runs on one lane at one step; three schedules are built and coop_build keeps one.
// Levels (two of them): level 1, the maximal subtrees of at most m rows, packed into the L bins
// (longest first); the rows above them (the trunk) are scheduled the same way, as a tree of their
// own, at level 2, and so on until a level takes all remaining rows (at worst one subtree on one
// lane). m is chosen per level to minimise the steps of that level plus an estimate of the rest
// (the remaining rows one after another, or the larger of their height and their number over L:
// one schedule each). Lane j runs the rows of its bin of each level in descending order; each
// level starts at a chunk boundary. The list schedule (coop_list, session 9): Hu's
// deepest-ready-row-first, step by step. In every schedule a row runs after its children, and
// after those of other lanes by at least a chunk boundary (the warp synchronises once per chunk).
//
// Backward step k of lane j is entry steps[k L + j] (int4):
//   x  the row (-1: the lane idles)
//   y  flags | first root cell << 8 | root cells << 20 (the row's children on other lanes)
//   z  the cell that receives the row's contribution (-1: carried in registers; the parent, or
//      n + k when the parent runs on another lane: the k-th root cell)
//   w  the parent (-1 for row 0)
// The forward sweep runs the steps in reverse order.
//
// Cells (shared memory, per system, two doubles each): cell i < n is row i's accumulator of its
// children's contributions (while the children run), then (h_i, g_i), then (h_i, x_i); cell
// n + k is the contribution of the k-th root; cell n + K holds zeros (read by rows without an
// accumulator, and as x_p of row 0) and cell n + K + 1 takes the stores that are not needed
// (contributions carried in registers), so that a step has no data-dependent branch.

constexpr int COOP_CH = 2; // steps per chunk (one pipeline stage)

enum {
  CF_CARRY = 1, // the parent is the lane's next row: the contribution stays in registers
  CF_ACC = 2,   // the row's cell holds contributions of children of its own lane
  CF_INIT = 4,  // the row's contribution is the first to its target cell: store, not add
  CF_TOP = 8,   // row 0: x = g
  CF_IDLE = 16, // the lane idles (encoded table only): compute on row 0's values, store nothing
  CF_ROOTS = 32 // some row of the chunk, in any bin, has root cells (encoded table only: set in
                // every entry of the chunk, so that the warp branches to the roots loops as one)
};

struct CoopTree {
  int L;
  int32_t n;
  int K;         // rows whose parent runs on another lane: root cells n .. n+K-1
  int MB;        // steps
  int levels;    // levels of a level schedule; 0: the list schedule
  int bin_rows;  // rows of the longest bin of level 1 (list schedule: of the busiest lane)
  int upper_rows; // rows above level 1 (list schedule: 0)
  std::vector<int4> steps;   // MB x L: row, flags | roots, target row or cell, parent
  std::vector<int4> enc;     // the same, in offsets of a lane's cells (coop_encode)
  std::vector<uint32_t> goff; // row x stride x 8 of each step (copies, x stores); 0 when idle;
                              // [chunk][lane][step of the chunk] (coop_encode)
  int RS;        // the first RS steps keep (h, g) in registers (coop_encode; 0: none)
  int cells;     // rows with a cell: the others are register rows (coop_reg_rows)
  int reg_cells; // the rows that keep a cell with COOP_REG_CHUNKS register chunks (coop_build)
};

// Register rows (session 8): the lanes keep (h, g) of the first RS steps of the backward sweep
// (the last RS of the forward sweep) in registers (static indices: those chunks are unrolled),
// so these rows never store (h, g) in shared memory. A row among them needs no cell at all when
// nothing else uses it: no child adds to it (every child carries its contribution in registers:
// a leaf or a chain row) and no child reads its x from it (a carrying child takes x from the
// register carry). Its cell is dropped and the other cells renumbered (rows, then the roots, the
// zero and the discard cell), so that a warp's cells shrink by 16 G B per such row: big-high
// L 8 holds 4 warps with 6 stages instead of 3 (docs/gpu-hines.md "Session 8").
// 16 chunks (session 9; 12 before): big-low and big-high hold 5 warps with 5 stages instead of 4
// (247 registers, no spills; docs/gpu-hines.md "Session 9").
constexpr int COOP_REG_CHUNKS = SE_HINES_COOP_REG_STEPS / COOP_CH; // the kernels' register chunks

// Fills *cell (when given) with each row's cell for RS register steps (-1: no cell) and returns
// the number of row cells.
int coop_reg_rows(const CoopTree &t, int RS, std::vector<int32_t> *cell) {
  const int32_t n = t.n;
  std::vector<int> children((size_t)n, 0), carried((size_t)n, 0);
  std::vector<char> reg((size_t)n, 0);
  for (const int4 &o : t.steps)
    if (o.x > 0) {
      children[o.w]++;
      carried[o.w] += (o.y & CF_CARRY) != 0;
    }
  for (size_t q = 0; q < (size_t)RS * t.L && q < t.steps.size(); q++) {
    const int32_t v = t.steps[q].x;
    if (v > 0 && children[v] == carried[v])
      reg[v] = 1;
  }
  int cells = 0;
  if (cell)
    cell->assign((size_t)n, -1);
  for (int32_t v = 0; v < n; v++)
    if (!reg[v]) {
      if (cell)
        (*cell)[v] = cells;
      cells++;
    }
  return cells;
}

int pad_steps(long v) { return (int)((v + COOP_CH - 1) / COOP_CH * COOP_CH); }

// Longest-first packing of the subtrees (roots, sizes) into L bins (ties to the lower bin);
// sets bin_of[root] when bin_of is given; returns the largest load.
long pack_bins(const std::vector<int32_t> &roots, const std::vector<int32_t> &size, int L,
               std::vector<int> *bin_of) {
  std::vector<int32_t> order(roots);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return size[a] > size[b]; });
  std::vector<long> load((size_t)L, 0);
  for (int32_t r : order) {
    int j = 0;
    for (int q = 1; q < L; q++)
      if (load[q] < load[j])
        j = q;
    load[j] += size[r];
    if (bin_of)
      (*bin_of)[r] = j;
  }
  return *std::max_element(load.begin(), load.end());
}

// One schedule: lane and level of every row, and the steps of each level. The rows
// above a level are costed as run one after another (est = 0) or by the larger of their
// height and their number over L (est = 1).
void coop_levels(const int32_t *parent, int32_t n, int L, int est, std::vector<int> &lane,
                 std::vector<int> &level, std::vector<int> &level_steps) {
  std::vector<int> bin_of((size_t)n, -1), height((size_t)n);
  std::vector<int32_t> size((size_t)n), roots, cand;
  lane.assign((size_t)n, -1);
  level.assign((size_t)n, -1);
  level_steps.clear();
  int32_t remaining = n; // rows with level < 0: the tree above the levels so far
  for (int lv = 0; remaining > 0; lv++) {
    // sizes within the remaining tree (its rows are ancestor-closed)
    for (int32_t v = 0; v < n; v++)
      size[v] = level[v] < 0 ? 1 : 0;
    for (int32_t v = n - 1; v >= 1; v--)
      if (level[v] < 0)
        size[parent[v]] += size[v];
    cand.clear();
    for (int32_t v = 0; v < n; v++)
      if (level[v] < 0)
        cand.push_back(size[v]);
    std::sort(cand.begin(), cand.end());
    cand.erase(std::unique(cand.begin(), cand.end()), cand.end());
    auto is_root = [&](int32_t v, int32_t m) {
      return level[v] < 0 && size[v] <= m && (v == 0 || size[parent[v]] > m);
    };
    long best = -1;
    int32_t m_best = cand.back();
    for (int32_t m : cand) {
      long upper = 0, tallest = 0;
      roots.clear();
      for (int32_t v = 0; v < n; v++) {
        height[v] = 1;
        if (level[v] >= 0)
          continue;
        if (size[v] > m)
          upper++;
        else if (is_root(v, m))
          roots.push_back(v);
      }
      for (int32_t v = n - 1; v >= 0; v--)
        if (level[v] < 0 && size[v] > m) {
          tallest = std::max(tallest, (long)height[v]);
          if (v > 0)
            height[parent[v]] = std::max(height[parent[v]], height[v] + 1);
        }
      const long rest = est ? std::max(tallest, (upper + L - 1) / L) : upper;
      const long cost = pad_steps(pack_bins(roots, size, L, NULL)) + pad_steps(rest);
      if (best < 0 || cost <= best) {
        best = cost;
        m_best = m;
      }
    }
    roots.clear();
    for (int32_t v = 0; v < n; v++)
      if (is_root(v, m_best))
        roots.push_back(v);
    level_steps.push_back(pad_steps(pack_bins(roots, size, L, &bin_of)));
    for (int32_t v = 0; v < n; v++) {
      if (level[v] >= 0 || size[v] > m_best)
        continue;
      lane[v] = is_root(v, m_best) ? bin_of[v] : lane[parent[v]];
      level[v] = lv;
      remaining--;
    }
  }
}

// Hu's list schedule (session 9): step by step, each lane first continues its chain (the parent
// of its previous row, when ready: the contribution then stays in registers), else takes the
// deepest ready row (deepest first is Hu's rule, optimal for unit-time rows of a tree without
// the chunk rule). A row is ready for lane j at step s when each child ran at an earlier step,
// and each child of another lane in an earlier chunk (the warp synchronises once per chunk, so
// another lane's root cell is read a chunk later). Unlike the levels, no lane waits for the
// slowest bin of a level: big-low at 8 lanes takes 95 steps instead of 160. Fills lane and step
// of each row; returns the steps.
int coop_list(const int32_t *parent, int32_t n, int L, std::vector<int> &lane,
              std::vector<int> &step) {
  std::vector<int> depth((size_t)n, 0), left((size_t)n, 0), first((size_t)n + 1, 0), kids;
  for (int32_t v = 1; v < n; v++) {
    depth[v] = depth[parent[v]] + 1;
    left[parent[v]]++;
  }
  for (int32_t v = 0; v < n; v++)
    first[v + 1] = first[v] + left[v];
  kids.resize((size_t)first[n]);
  std::vector<int> fill(first.begin(), first.end() - 1);
  for (int32_t v = 1; v < n; v++)
    kids[fill[parent[v]]++] = v;
  lane.assign((size_t)n, -1);
  step.assign((size_t)n, -1);
  std::vector<int32_t> ready; // rows whose children have all run
  for (int32_t v = 0; v < n; v++)
    if (left[v] == 0)
      ready.push_back(v);
  auto fits = [&](int32_t v, int j, int s) { // the children of v let it run on lane j at step s
    for (int q = first[v]; q < first[v + 1]; q++) {
      const int32_t u = kids[q];
      if (step[u] < 0 || step[u] >= s || (lane[u] != j && step[u] / COOP_CH >= s / COOP_CH))
        return false;
    }
    return true;
  };
  std::vector<int32_t> prev((size_t)L, -1), took((size_t)L);
  int s = 0;
  for (int32_t done = 0; done < n; s++) {
    for (int j = 0; j < L; j++) {
      took[j] = -1;
      const int32_t u = prev[j];
      if (u > 0 && step[u] == s - 1 && left[parent[u]] == 0 && step[parent[u]] < 0 &&
          fits(parent[u], j, s) && std::find(took.begin(), took.begin() + j, parent[u]) ==
                                       took.begin() + j)
        took[j] = parent[u];
    }
    for (int j = 0; j < L; j++) {
      if (took[j] >= 0)
        continue;
      for (int32_t v : ready)
        if ((took[j] < 0 || depth[v] > depth[took[j]]) && fits(v, j, s) &&
            std::find(took.begin(), took.end(), v) == took.end())
          took[j] = v;
    }
    for (int j = 0; j < L; j++) {
      const int32_t v = took[j];
      if (v < 0)
        continue;
      step[v] = s;
      lane[v] = j;
      prev[j] = v;
      done++;
      ready.erase(std::find(ready.begin(), ready.end(), v));
      if (v > 0 && --left[parent[v]] == 0)
        ready.push_back(parent[v]);
    }
  }
  return s;
}

// The lanes and steps of a schedule of coop_levels: lane j runs the rows of its bin of each
// level in descending order from the level's first step.
void coop_level_steps(int32_t n, int L, const std::vector<int> &lane, const std::vector<int> &level,
                      const std::vector<int> &level_steps, std::vector<int> &step) {
  std::vector<int> start(level_steps.size(), 0), next(level_steps.size() * L, 0);
  for (size_t lv = 1; lv < level_steps.size(); lv++)
    start[lv] = start[lv - 1] + level_steps[lv - 1];
  step.assign((size_t)n, -1);
  for (int32_t v = n - 1; v >= 0; v--)
    step[v] = start[level[v]] + next[(size_t)level[v] * L + lane[v]]++;
}

// The step table names a row's root cells by its first (12 bits) and their count (11 bits).
constexpr int COOP_MAX_FIRST_ROOT = 4096, COOP_MAX_ROOTS = 2048;

// Root cells of a schedule: a row whose parent runs on another lane sends its contribution to a
// cell of its own (read by the parent a chunk later), numbered by parent. Returns their number;
// *fits: whether the step table can name them (COOP_MAX_FIRST_ROOT, COOP_MAX_ROOTS).
int coop_cross_rows(const int32_t *parent, int32_t n, const std::vector<int> &lane, bool *fits) {
  std::vector<int> per((size_t)n, 0);
  for (int32_t v = 1; v < n; v++)
    per[parent[v]] += lane[v] != lane[parent[v]];
  int k = 0;
  *fits = true;
  for (int32_t v = 0; v < n; v++) {
    if (per[v] > 0 && (k >= COOP_MAX_FIRST_ROOT || per[v] >= COOP_MAX_ROOTS))
      *fits = false;
    k += per[v];
  }
  return k;
}

// The plan: among the schedules of coop_levels (est 0 or 1) and coop_list (where it takes fewer
// steps than the levels), the one with the smallest product of steps (the time a system is
// resident) and cells (its shared memory), a schedule whose root cells the table can name first;
// then flags and targets from each row's lane and step.
int coop_build(const int32_t *parent, int32_t n, int L, CoopTree *t, se_error *err) {
  std::vector<int> lane, level, step; // the kept schedule (the list's rows all at level 0)
  long cost_best = -1;
  bool fits_best = false;
  int MB = 0, levels = 0;
  for (int cand = 0; cand < 3; cand++) {
    std::vector<int> la, le, sp;
    int mb = 0, lv = 0;
    if (cand < 2) {
      std::vector<int> st;
      coop_levels(parent, n, L, cand, la, le, st);
      coop_level_steps(n, L, la, le, st, sp);
      for (int k : st)
        mb += k;
      lv = (int)st.size();
    } else {
      mb = pad_steps(coop_list(parent, n, L, la, sp));
      // the list schedule only where it also takes fewer steps: its lanes run rows out of index
      // order, so that the 128-byte lines a lane's copies fetch hold fewer of its next rows
      // (session 9: small-low L 2 on block 16 84.4% of copy in 42 steps against 94.4% in the
      // levels' 40, where the product of steps and cells had taken the list)
      if (mb >= MB)
        continue;
      le.assign((size_t)n, 0);
    }
    bool fits = false;
    const long cost = (long)mb * (n + 2 + coop_cross_rows(parent, n, la, &fits));
    if (cost_best < 0 || (fits && !fits_best) || (fits == fits_best && cost < cost_best)) {
      cost_best = cost;
      fits_best = fits;
      lane.swap(la);
      level.swap(le);
      step.swap(sp);
      MB = mb;
      levels = lv;
    }
  }
  // root cells, grouped by parent
  std::vector<int32_t> hanging;
  for (int32_t v = 1; v < n; v++)
    if (lane[v] != lane[parent[v]])
      hanging.push_back(v);
  std::stable_sort(hanging.begin(), hanging.end(),
                   [&](int32_t a, int32_t b) { return parent[a] < parent[b]; });
  std::vector<int> cell_of((size_t)n, -1), first_root((size_t)n, 0), n_roots((size_t)n, 0);
  for (size_t k = 0; k < hanging.size(); k++) {
    const int32_t r = hanging[k], p = parent[r];
    cell_of[r] = (int)k;
    if (n_roots[p] == 0)
      first_root[p] = (int)k;
    n_roots[p]++;
  }
  // flags and targets: a row whose parent runs next on its lane carries its contribution in
  // registers; one whose parent runs later on its lane adds it to the parent's cell (the first
  // to arrive stores)
  std::vector<int> flags((size_t)n, 0), target((size_t)n, -1), arrived((size_t)n, -1);
  for (int32_t v = 1; v < n; v++) {
    const int32_t p = parent[v];
    if (lane[v] != lane[p]) {
      target[v] = n + cell_of[v];
      flags[v] |= CF_INIT;
    } else if (step[p] == step[v] + 1) {
      flags[v] |= CF_CARRY;
    } else {
      target[v] = p;
      flags[p] |= CF_ACC;
      if (arrived[p] < 0 || step[v] < step[arrived[p]])
        arrived[p] = v;
    }
  }
  for (int32_t v = 0; v < n; v++)
    if (arrived[v] >= 0)
      flags[arrived[v]] |= CF_INIT;
  for (int32_t v = 0; v < n; v++)
    if (first_root[v] >= COOP_MAX_FIRST_ROOT || n_roots[v] >= COOP_MAX_ROOTS)
      SE_FAIL(err, SE_ERR_UNSUPPORTED,
              "COOP kernel: row %d has %d subtree roots from cell %d (at most %d from %d)", v,
              n_roots[v], first_root[v], COOP_MAX_ROOTS - 1, COOP_MAX_FIRST_ROOT - 1);
  t->L = L;
  t->n = n;
  t->K = (int)hanging.size();
  t->levels = levels;
  t->MB = MB;
  t->bin_rows = 0;
  t->upper_rows = 0;
  std::vector<int> rows((size_t)L, 0); // rows of each lane at level 0
  for (int32_t v = 0; v < n; v++)
    if (level[v] == 0)
      t->bin_rows = std::max(t->bin_rows, ++rows[lane[v]]);
    else
      t->upper_rows++;
  t->steps.assign((size_t)t->MB * L, make_int4(-1, 0, -1, -1));
  for (int32_t v = 0; v < n; v++)
    t->steps[(size_t)step[v] * L + lane[v]] =
        make_int4(v, flags[v] | first_root[v] << 8 | n_roots[v] << 20, target[v], parent[v]);
  t->reg_cells = coop_reg_rows(*t, COOP_CH * COOP_REG_CHUNKS, nullptr);
  // row 0 (every row is below it: the last step of either schedule) is in the last chunk: the
  // forward sweep tests CF_TOP only in its first chunk
  const int top_step = step[0];
  if (top_step / COOP_CH != t->MB / COOP_CH - 1)
    SE_FAIL(err, SE_ERR_UNSUPPORTED, "COOP plan: row 0 at step %d of %d, not in the last chunk",
            top_step, t->MB);
  return SE_OK;
}

// The device form of the step table for G systems per warp and row stride rs: cell c of a
// lane's system is at byte 16 G c of the lane's cell base, so the table holds 16 G c: x the
// row's cell (the discard cell when idle: the lane copies row 0 and computes into the discard
// cell), z the target (the discard cell when the contribution is carried or
// there is none), w the parent's x (16 G c + 8; the zero cell's for row 0), y the flags (with
// CF_ROOTS in every entry of a chunk that adds root cells); goff = row x rs x 8
// (bytes: a copy source or an x store is one 64-bit add from a lane's base), ordered
// [chunk][lane][step of the chunk] so that a lane reads a chunk's offsets as one uint2.
void coop_encode(CoopTree *t, int G, uint32_t rs, int RS) {
  const int32_t n = t->n;
  std::vector<int32_t> cell;
  t->RS = RS;
  t->cells = coop_reg_rows(*t, RS, &cell);
  const int zero = t->cells + t->K;
  t->enc.resize(t->steps.size());
  t->goff.resize(t->steps.size());
  for (size_t q = 0; q < t->steps.size(); q++) {
    const int4 o = t->steps[q];
    const size_t k = q / t->L, j = q % t->L; // step, lane
    const size_t qg = k / COOP_CH * COOP_CH * t->L + j * COOP_CH + k % COOP_CH;
    if (o.x < 0) {
      t->enc[q] = make_int4(16 * G * (zero + 1), CF_IDLE, 16 * G * (zero + 1), 16 * G * zero + 8);
      t->goff[qg] = 0;
      continue;
    }
    const bool carry = (o.y & CF_CARRY) != 0;
    // a register row's cell is the discard cell (only its x goes there); the target of a row
    // that does not carry is never a register row, nor the parent whose x it reads
    const int own = cell[o.x] < 0 ? zero + 1 : cell[o.x];
    const int target = carry || o.z < 0 ? zero + 1 : o.z >= n ? t->cells + (o.z - n) : cell[o.z];
    const int xp = o.w < 0 || cell[o.w] < 0 ? zero : cell[o.w]; // unread when it carries
    t->enc[q] = make_int4(16 * G * own, o.y | (o.x == 0 ? CF_TOP : 0), 16 * G * target,
                          16 * G * xp + 8);
    t->goff[qg] = (uint32_t)o.x * rs * (uint32_t)sizeof(double);
  }
  const size_t chunk = (size_t)COOP_CH * t->L;
  for (size_t q0 = 0; q0 < t->steps.size(); q0 += chunk) {
    bool roots = false;
    for (size_t q = q0; q < q0 + chunk; q++)
      roots = roots || (t->steps[q].x >= 0 && (t->steps[q].y >> 20) != 0);
    for (size_t q = q0; q < q0 + chunk && roots; q++)
      t->enc[q].y |= CF_ROOTS;
  }
}

// ---------------------------------------------------------------------------------------------
// The lane code.

// The double at byte offset `off` from p (the table's cell offsets are in bytes: one add).
SE_HD inline double *at(double *p, int off) {
  return reinterpret_cast<double *>(reinterpret_cast<char *>(p) + off);
}
SE_HD inline const double *at(const double *p, int off) {
  return reinterpret_cast<const double *>(reinterpret_cast<const char *>(p) + off);
}

// A cell (two doubles, 16-byte aligned) as one 16-byte access: a warp's L bins then touch
// L x 128 B (G = 8) in L shared-memory wavefronts, where two 8-byte accesses to the same
// banks would take 2 L.
SE_HD inline double2 cell_load(const double *p) { return *reinterpret_cast<const double2 *>(p); }
SE_HD inline void cell_store(double *p, double v0, double v1) {
  *reinterpret_cast<double2 *>(p) = make_double2(v0, v1);
}

struct CoopArgs {
  int layout;
  int32_t n, bs;
  int64_t S;
  int MB;
  int root0;      // index of the first root cell (the row cells before it: CoopTree::cells)
  int zero;       // index of the zero cell (root0 + K); the discard cell is zero + 1
  int warp_words; // doubles of shared memory per warp: the stages, then the cells
  int reg_chunks; // the register chunks (CoopTree::RS / COOP_CH; the kernel's RC)
  const int4 *steps;      // the encoded table (coop_encode), MB x lanes
  const uint32_t *goff;
  const double *u, *l, *d;
  double *rhs;
  unsigned *next; // the groups handed out past each warp's first (0 between solves)
};

// G systems per warp (L = 32 / G lanes per system), ST pipeline stages, W16 16-byte copies.
template <int G, int ST, bool W16> struct CoopShape {
  static constexpr int PB = W16 ? 2 : 1;   // doubles per copy piece
  static constexpr int PR = G / PB;        // pieces per row of one array
  static constexpr int NR = 4 * PR / G;    // pieces per lane and step: 2 (16 B) or 4 (8 B)
  static constexpr int SW = 128;           // doubles of one step in a stage
  static constexpr int STAGE = ST * COOP_CH * SW; // doubles of the stages of one warp
};

// A lane's copy pieces for one warp's G systems. Step (st, kk) of the stages holds 128
// doubles, [array][bin][system]. Lane j G + g copies pieces of its own bin j (so one table
// offset per step serves all its pieces): piece p = g + G r (r < NR) is system pair/single
// q = p % PR of array p / PR, at offset dst + r (128 / NR) of the step. A piece whose systems
// are all beyond the last reads system s0's (never stored: its lanes are not live); a 16-byte
// piece half beyond the last reads the block layout's padding (FULL takes 16-byte pieces only
// for an even number of systems), so every piece is a whole copy without a zero-fill size.
template <int G, int ST, bool W16> struct CoopPieces {
  typedef CoopShape<G, ST, W16> Sh;
  const char *src[Sh::NR]; // row 0 of the piece's array and systems (a table offset is in bytes)
  int dst;                 // offset of piece 0 in a step's 128 doubles
};

// A 64-bit base the compiler cannot take apart: src + offset then stays one 64-bit add
// instead of an index re-derived from the base's parts (4 instructions per copy).
SE_HD inline const char *opaque_ptr(const char *p) {
#ifdef __CUDA_ARCH__
  asm volatile("mov.b64 %0, %0;" : "+l"(p));
#endif
  return p;
}

template <int G, int ST, bool W16>
SE_HD inline void coop_pieces(const CoopArgs &a, int lane, int64_t b0, int nvalid,
                              CoopPieces<G, ST, W16> *pc) {
  typedef CoopShape<G, ST, W16> Sh;
  const int j = lane / G, g = lane % G;
  SE_UNROLL
  for (int r = 0; r < Sh::NR; r++) {
    const int p = g + G * r;
    const int q = p % Sh::PR, arr = p / Sh::PR;
    const int gs = q * Sh::PB;
    const double *base = arr == 0 ? a.u : (arr == 1 ? a.l : (arr == 2 ? a.d : a.rhs));
    pc->src[r] = opaque_ptr(reinterpret_cast<const char *>(base + b0 + (gs < nvalid ? gs : 0)));
    if (r == 0)
      pc->dst = arr * 32 + j * G + gs;
  }
}

// The table offsets (row x stride x 8) of chunk c's two steps in bin j.
template <int G> SE_HD inline uint2 coop_goff(const uint32_t *goff, int c, int j) {
  constexpr int L = 32 / G;
  static_assert(COOP_CH == 2, "a chunk's table offsets are one uint2");
  return *reinterpret_cast<const uint2 *>(goff + (c * L + j) * COOP_CH);
}

// The copies of a chunk with offsets off2 into stage st (no commit).
template <int G, int ST, bool W16>
SE_HD inline void coop_issue_at(const CoopPieces<G, ST, W16> &pc, uint2 off2, int st,
                                double *stage) {
  typedef CoopShape<G, ST, W16> Sh;
  double *sst = stage + st * COOP_CH * Sh::SW + pc.dst;
  SE_UNROLL
  for (int kk = 0; kk < COOP_CH; kk++) {
    const uint32_t off = kk ? off2.y : off2.x; // 8 n rs < 2^32
    SE_UNROLL
    for (int r = 0; r < Sh::NR; r++) {
      double *dst = sst + kk * Sh::SW + r * (Sh::SW / Sh::NR);
      const double *src = reinterpret_cast<const double *>(pc.src[r] + off);
      if (W16)
        copy16_async_l2(dst, src);
      else
        copy8_async(dst, src);
    }
  }
}

// Copies the inputs of chunk c into its stage (c % ST) when `copies` (c is a chunk of the
// table): per step one table offset (the lane's bin's row x stride x 8), NR whole pieces. No
// branch on the table: an idle row copies row 0. Without copies (a chunk past the last) it
// commits an empty group, so that every chunk is one group.
template <int G, int ST, bool W16>
SE_HD inline void coop_issue(const CoopPieces<G, ST, W16> &pc, const uint32_t *goff, int c, int j,
                             double *stage, bool copies) {
  if (copies)
    coop_issue_at<G, ST, W16>(pc, coop_goff<G>(goff, c, j), c % ST, stage);
  copy_commit();
}

// The table entries of backward chunk c of bin j (its steps in order).
template <int G>
SE_HD inline void coop_ops(const int4 *steps, int c, int j, int4 op[COOP_CH]) {
  constexpr int L = 32 / G;
  SE_UNROLL
  for (int kk = 0; kk < COOP_CH; kk++)
    op[kk] = steps[(c * COOP_CH + kk) * L + j];
}

// What a lane reads at the start of a backward chunk: the table entries, the stage's inputs
// (after these loads the chunk's stage is free for the copies of chunk c + ST) and the
// accumulated contributions of each row's children in its own cell (or the zero cell).
struct CoopBackLoads {
  int4 op[COOP_CH];
  double uu[COOP_CH], ll[COOP_CH], dd[COOP_CH], rr[COOP_CH], a0[COOP_CH], a1[COOP_CH];
};

// Loads of backward chunk c (in stage st = c % ST) for lane j G + g (system g of the warp, bin
// j), whose table entries op were read one chunk ahead (coop_ops). Everything a step reads is
// loaded here: a step's stores never reach the next step's cells (its parent, when it is the
// next row, is carried in registers; the bins of a level are disjoint subtrees), except a
// sibling's parent cell (read in the step).
template <int G, int ST>
SE_HD inline void coop_back_load(const CoopArgs &a, const int4 op[COOP_CH], int st, int lane,
                                 const double *stage, double *cells, CoopBackLoads *b) {
  double *cg = cells + 2 * (lane % G); // cell c of the lane's system: at(cg, 16 G c)
  const int zero = 16 * G * a.zero;
  SE_UNROLL
  for (int kk = 0; kk < COOP_CH; kk++) {
    const int4 o = op[kk];
    b->op[kk] = o;
    const double *w = stage + (st * COOP_CH + kk) * 128 + lane;
    b->uu[kk] = w[0];
    b->ll[kk] = w[32];
    b->dd[kk] = w[64];
    b->rr[kk] = w[96];
    const double2 acc = cell_load(at(cg, (o.y & CF_ACC) ? o.x : zero));
    b->a0[kk] = acc.x;
    b->a1[kk] = acc.y;
  }
}

// Backward steps of a chunk from its loads (to which the root cells below each row are added
// first): rows leave (h, g) in their cells and send ((u l) / d', u g) to their parent: to the
// parent's cell or a root cell, or, when the parent is the lane's next row, as the factors
// cy = (u l, 1 / d', u, g) in registers, which the parent takes in fused multiply-adds (its
// pivot and right-hand side then wait on one FP64 operation of the previous row). No branch on
// the table but CF_ROOTS, the same in every lane: an idle entry computes on row 0's values and
// writes the discard cell. With keep (a register chunk), (h, g) go to keep[0 .. COOP_CH - 1]
// instead of the rows' cells.
template <int G>
SE_HD inline void coop_back_steps(const CoopArgs &a, CoopBackLoads &b, int lane,
                                  double *cells, double cy[4], double2 *keep) {
  double *cg = cells + 2 * (lane % G);
  const int zero = 16 * G * a.zero;
  // the roots below each row (written at lower levels, in earlier chunks)
  bool roots = (b.op[0].y & CF_ROOTS) != 0;
#ifdef __CUDA_ARCH__
  roots = __any_sync(0xffffffffu, roots); // a uniform branch (no BSSY/BSYNC); n_roots 0 is a no-op
#endif
  if (roots) {
    SE_UNROLL
    for (int kk = 0; kk < COOP_CH; kk++) {
      const int n_roots = b.op[kk].y >> 20, first = (b.op[kk].y >> 8) & 0xfff;
#ifdef __CUDA_ARCH__
#pragma unroll 1
#endif
      for (int q = 0; q < n_roots; q++) {
        const double2 rc = cell_load(cg + 2 * G * (a.root0 + first + q));
        b.a0[kk] += rc.x;
        b.a1[kk] += rc.y;
      }
    }
  }
  SE_UNROLL
  for (int kk = 0; kk < COOP_CH; kk++) {
    const int4 o = b.op[kk];
    // after the previous step's stores (a sibling's add); a first contribution adds to 0
    const double2 t_old = cell_load(at(cg, (o.y & CF_INIT) ? zero : o.z));
    const double ul = b.uu[kk] * b.ll[kk]; // off the dependency chain
    // the carried contribution of the previous row enters as a fused multiply-add of its
    // factors; the negation on the factor that is not selected (a free DFMA operand modifier)
    const double piv = fma(cy[0], -cy[1], b.dd[kk] - b.a0[kk]);
    const double rhs = fma(cy[2], -cy[3], b.rr[kk] - b.a1[kk]);
    const double r = recip(piv);
    const double h = b.ll[kk] * r, gg = rhs * r;
    if (keep)
      keep[kk] = make_double2(h, gg);
    else
      cell_store(at(cg, o.x), h, gg);
    const double nd = ul * r, nr = b.uu[kk] * gg;
    cell_store(at(cg, o.z), t_old.x + nd, t_old.y + nr);
    const bool carry = (o.y & CF_CARRY) != 0;
    cy[0] = carry ? ul : 0.0;
    cy[1] = r;
    cy[2] = carry ? b.uu[kk] : 0.0;
    cy[3] = gg;
  }
}

// (h, g) of the rows of a forward chunk (backward chunk entries op, last step first); with top
// (the first forward chunk, the only one that holds row 0: coop_build) row 0's h as 0 (its x_p is
// the zero cell), so that x = g - h x_p needs no test on the x chain.
template <int G>
SE_HD inline void coop_fwd_hg(const int4 op[COOP_CH], int lane, const double *cells,
                              double2 hg[COOP_CH], bool top) {
  const double *cg = cells + 2 * (lane % G);
  SE_UNROLL
  for (int kk = 0; kk < COOP_CH; kk++) {
    hg[kk] = cell_load(at(cg, op[COOP_CH - 1 - kk].x));
    if (top && (op[COOP_CH - 1 - kk].y & CF_TOP))
      hg[kk].x = 0.0; // x_0 = g_0 - 0 x (zero cell) whatever l_0 is
  }
}

// Forward steps of chunk c (backward chunk nc - 1 - c, last step first): x_i = g_i - h_i
// x_p(i), kept in the row's cell; X points at row 0 of the lane's system in rhs (a table offset
// is in bytes). Idle entries compute on the discard cell and store nothing to device memory.
// op and hg hold the chunk's table entries and (h, g), read one chunk ahead; on return they
// hold the next chunk's (after the last: backward chunk 0's entries, the next group's first).
// No forward step writes a cell's h or another row's g, so (h, g) can be read early. With kept
// (a register chunk: backward chunk nc - 1 - c's keep), (h, g) come from there instead.
template <int G>
SE_HD inline void coop_fwd(const CoopArgs &a, const int4 *steps, const uint32_t *goff, int c,
                           int lane, double *cells, char *X, bool live, double &xc,
                           int4 op[COOP_CH], double2 hg[COOP_CH], uint2 &go_ahead,
                           const double2 *kept) {
  const int j = lane / G, nc = a.MB / COOP_CH, cb = nc - 1 - c;
  double *cg = cells + 2 * (lane % G);
  // Loads first, as in the backward chunk: a step's x reaches the next step through xc when it
  // is the next step's parent (the loaded cell value is then not used).
  int4 o_run[COOP_CH];
  double xq[COOP_CH];
  const uint2 go2 = go_ahead; // read one chunk ahead
  const uint32_t go[COOP_CH] = {go2.y, go2.x};
  SE_UNROLL
  for (int kk = 0; kk < COOP_CH; kk++) {
    o_run[kk] = op[COOP_CH - 1 - kk];
    xq[kk] = *at(cg, o_run[kk].w);
  }
  double2 hg_run[COOP_CH];
  SE_UNROLL
  for (int kk = 0; kk < COOP_CH; kk++)
    hg_run[kk] = kept ? kept[COOP_CH - 1 - kk] : hg[kk];
  coop_ops<G>(steps, c + 1 < nc ? cb - 1 : 0, j, op);
  go_ahead = coop_goff<G>(goff, c + 1 < nc ? cb - 1 : 0, j);
  // only the first forward chunk (read before the sweep) holds row 0 (coop_build); after a
  // register chunk comes another or none, whose (h, g) are not in the cells
  if (!kept)
    coop_fwd_hg<G>(op, lane, cells, hg, false);
  SE_UNROLL
  for (int kk = 0; kk < COOP_CH; kk++) {
    const int4 o = o_run[kk];
    const double xp = (o.y & CF_CARRY) ? xc : xq[kk];
    const double x = fma(-hg_run[kk].x, xp, hg_run[kk].y); // row 0: h 0, x_p the zero cell
    at(cg, o.x)[1] = x;
    if (live && !(o.y & CF_IDLE))
      *reinterpret_cast<double *>(X + go[kk]) = x;
    xc = x;
  }
}

SE_HD inline int64_t coop_base(const CoopArgs &a, int64_t s) {
  return se_hines_index((se_hines_layout)a.layout, a.n, a.S, a.bs, s, 0);
}

// The systems of a warp's group k: G from s0 = k G, of which nvalid exist.
SE_HD inline int coop_valid(const CoopArgs &a, int64_t s0, int G) {
  return (int)(a.S - s0 < G ? a.S - s0 : G);
}

// The zero cell of the lane's system (lanes of bin 0 write it).
template <int G> SE_HD inline void coop_zero(const CoopArgs &a, int lane, double *cells) {
  if (lane < G) {
    cells[2 * (a.zero * G + lane)] = 0.0;
    cells[2 * (a.zero * G + lane) + 1] = 0.0;
  }
}

// Doubles of shared memory taken by the step tables (int4 and uint32 per step and lane),
// rounded up to 16 bytes.
SE_HD inline int coop_table_words(int n_steps) { return 2 * n_steps + (n_steps + 3) / 4 * 2; }

// ---------------------------------------------------------------------------------------------
// The kernel: persistent warps; warp k solves group k of G systems first, then the groups a
// counter in device memory hands out (one atomicAdd by lane 0 per group, drawn at the start of
// the group before, so that its latency hides behind a backward sweep): a warp that shares its
// scheduler, or its multiprocessor's memory path, with busier warps takes fewer groups (session
// 7: 9-12 points of the copy bandwidth on the medium classes against the fixed order k, k +
// warps, ..., docs/gpu-hines.md). The warp that draws the last ticket of a solve sets the counter
// back to 0 for the next one. The step table is copied once per CTA into shared memory.
//
// The copy pipeline: chunk c goes to stage c % ST. A backward chunk waits for its stage, loads
// it into registers, and, once every lane has loaded (__syncwarp), the same stage takes the
// copies of chunk c + ST: ST chunks are in flight while a chunk computes. At the start of a
// group's forward sweep (which reads no stage) the warp issues the first ST chunks of its next
// group, so that the copies also run during the forward sweep and the next group starts on
// landed data.

// Backward chunk c of a warp. ISSUE: its stage then takes the copies of chunk c + ST; without,
// an empty group (the last ST chunks). op holds the chunk's table entries and on return the
// next chunk's (backward chunk nc - 1's after the last: the first of the forward sweep).
template <int G, int ST, bool W16, bool ISSUE>
__device__ inline void coop_back_chunk(const CoopArgs &a, const int4 *steps, const uint32_t *goff,
                                       const CoopPieces<G, ST, W16> &pc, int c, int nc, int lane,
                                       double *stage, double *cells, int4 op[COOP_CH],
                                       double cy[4], double2 *keep) {
  const int j = lane / G;
  copy_wait<ST - 1>();
  __syncwarp(); // chunk c has landed (every lane's copies)
  CoopBackLoads b;
  const int st = c % ST;
  coop_back_load<G, ST>(a, op, st, lane, stage, cells, &b);
  coop_ops<G>(steps, ISSUE || c + 1 < nc ? c + 1 : nc - 1, j, op);
  __syncwarp(); // every lane has read chunk c's stage
  if (ISSUE) // chunk c + ST into the stage just read: (c + ST) % ST = st
    coop_issue_at<G, ST, W16>(pc, coop_goff<G>(goff, c + ST, j), st, stage);
  copy_commit();
  coop_back_steps<G>(a, b, lane, cells, cy, keep);
}

// RC register chunks (0 or COOP_REG_CHUNKS): the first RC backward chunks keep (h, g) in
// registers; a kernel with them runs at most 8 warps per CTA, so that it may use up to 255
// registers per thread.
template <int G, int ST, bool W16, int RC>
__global__ void __launch_bounds__(RC ? 256 : 512) k_coop(CoopArgs a) {
  extern __shared__ __align__(16) double se_coop_sm[];
  int4 *steps = reinterpret_cast<int4 *>(se_coop_sm);
  const int n_steps = a.MB * (32 / G);
  uint32_t *goff = reinterpret_cast<uint32_t *>(steps + n_steps);
  for (int q = threadIdx.x; q < n_steps; q += blockDim.x) {
    steps[q] = a.steps[q];
    goff[q] = a.goff[q];
  }
  __syncthreads();
  const int warp = threadIdx.x >> 5;
  int lane; // read once, opaque to the compiler, so that the lane's constants stay in registers
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  const int64_t groups = (a.S + G - 1) / G, warps = (int64_t)gridDim.x * (blockDim.x >> 5);
  const int64_t k0 = (int64_t)blockIdx.x * (blockDim.x >> 5) + warp;
  if (k0 >= groups) // the last CTA's warps past the last group (they draw no ticket)
    return;
  double *stage = se_coop_sm + coop_table_words(n_steps) + warp * a.warp_words;
  double *cells = stage + CoopShape<G, ST, W16>::STAGE;
  const int g = lane % G, j = lane / G;
  CoopPieces<G, ST, W16> pc;
  int64_t s0 = k0 * G;
  coop_pieces<G, ST, W16>(a, lane, coop_base(a, s0), coop_valid(a, s0, G), &pc);
  coop_zero<G>(a, lane, cells);
  const int nc = a.MB / COOP_CH;
  for (int c = 0; c < ST; c++)
    coop_issue<G, ST, W16>(pc, goff, c, j, stage, c < nc);
  int4 op[COOP_CH];
  double2 hg[COOP_CH];
  coop_ops<G>(steps, 0, j, op);
  for (;;) {
    // the next group's ticket: tickets warps + t < groups are groups; the warps draw one ticket
    // each past them, the last of which is groups - 1 (for any grid)
    unsigned ticket = 0;
    if (lane == 0) {
      ticket = atomicAdd(a.next, 1u);
      if (ticket == groups - 1)
        *a.next = 0u; // every other warp has drawn its last ticket: the counter for the next solve
    }
    double cy[4] = {0.0, 0.0, 0.0, 0.0}, xc = 0.0;
    double2 keep[RC > 0 ? COOP_CH * RC : 1]; // (h, g) of the register chunks
    // the register chunks (unrolled: static indices into keep; coop_fit ensures RC <= nc - ST),
    // the chunks whose stage takes chunk c + ST (unrolled by 2, so that the entries read ahead
    // alternate between two sets of registers instead of being moved), then the last ST
#pragma unroll
    for (int c = 0; c < RC; c++)
      coop_back_chunk<G, ST, W16, true>(a, steps, goff, pc, c, nc, lane, stage, cells, op, cy,
                                        keep + COOP_CH * c);
#pragma unroll 2
    for (int c = RC; c < nc - ST; c++)
      coop_back_chunk<G, ST, W16, true>(a, steps, goff, pc, c, nc, lane, stage, cells, op, cy,
                                        nullptr);
    for (int c = nc > ST ? nc - ST : 0; c < nc; c++)
      coop_back_chunk<G, ST, W16, false>(a, steps, goff, pc, c, nc, lane, stage, cells, op, cy,
                                         nullptr);
    coop_fwd_hg<G>(op, lane, cells, hg, true); // the first forward chunk: row 0's h zeroed
    uint2 go = coop_goff<G>(goff, nc - 1, j); // the x-store offsets, read one chunk ahead
    char *X = reinterpret_cast<char *>(a.rhs + coop_base(a, s0) + g);
    const bool live = g < coop_valid(a, s0, G);
    const int64_t k = warps + (int64_t)__shfl_sync(0xffffffffu, ticket, 0);
    const bool more = k < groups;
    if (more) { // the stages are free: the next group's first chunks
      s0 = k * G;
      coop_pieces<G, ST, W16>(a, lane, coop_base(a, s0), coop_valid(a, s0, G), &pc);
      for (int c = 0; c < ST; c++)
        coop_issue<G, ST, W16>(pc, goff, c, j, stage, c < nc);
    }
    for (int c = 0; c < nc - RC; c++) {
      __syncwarp(); // a level's x before the level below reads it
      coop_fwd<G>(a, steps, goff, c, lane, cells, X, live, xc, op, hg, go, nullptr);
    }
#pragma unroll
    for (int r = RC - 1; r >= 0; r--) { // the register chunks, backward chunk r
      __syncwarp();
      coop_fwd<G>(a, steps, goff, nc - 1 - r, lane, cells, X, live, xc, op, hg, go,
                  keep + COOP_CH * r);
    }
    if (!more)
      break;
  }
}

typedef void (*coop_kernel_fn)(CoopArgs);

// The instantiation of a setting: lanes 2/4/8/16, stages 2/3/4/5/6/8, register chunks (8
// lanes only).
template <int G, bool W16, int RC> coop_kernel_fn coop_kernel_g(int stages) {
  switch (stages) {
  case 2: return k_coop<G, 2, W16, RC>;
  case 3: return k_coop<G, 3, W16, RC>;
  case 5: return k_coop<G, 5, W16, RC>;
  case 6: return k_coop<G, 6, W16, RC>;
  case 8: return k_coop<G, 8, W16, RC>;
  default: return k_coop<G, 4, W16, RC>;
  }
}

template <bool W16> coop_kernel_fn coop_kernel_w(int lanes, int stages, bool reg) {
  if (lanes == 2)
    return coop_kernel_g<16, W16, 0>(stages);
  if (lanes == 4)
    return coop_kernel_g<8, W16, 0>(stages);
  if (lanes == 8)
    return reg ? coop_kernel_g<4, W16, COOP_REG_CHUNKS>(stages) : coop_kernel_g<4, W16, 0>(stages);
  return coop_kernel_g<2, W16, 0>(stages);
}

// The kernel of a plan (its settings and register steps).
coop_kernel_fn coop_kernel(const se_hines_coop_info &info, bool w16) {
  const bool reg = info.reg_steps > 0;
  return w16 ? coop_kernel_w<true>(info.cfg.lanes, info.cfg.stages, reg)
             : coop_kernel_w<false>(info.cfg.lanes, info.cfg.stages, reg);
}

// The host emulation: the kernel's loop for one persistent warp that solves every group, lane
// after lane between synchronisation points. The cells are filled with NaN before each group
// (the stages hold the group's prefetched chunks), so a read of a cell that the group did not
// write shows in the result.
template <int G, int ST, bool W16> void coop_emulate_t(const CoopArgs &a) {
  typedef CoopShape<G, ST, W16> Sh;
  std::vector<double> sm((size_t)a.warp_words, __builtin_nan(""));
  double *stage = sm.data(), *cells = stage + Sh::STAGE;
  const int nc = a.MB / COOP_CH;
  const int64_t groups = (a.S + G - 1) / G;
  std::vector<CoopPieces<G, ST, W16>> pc(32);
  std::vector<CoopBackLoads> b(32);
  int4 op[32][COOP_CH];
  double2 hg[32][COOP_CH];
  uint2 go[32];
  const int RC = a.reg_chunks;
  std::vector<double2> keep((size_t)32 * COOP_CH * (RC > 0 ? RC : 1));
  auto kept = [&](int lane, int cb) { return keep.data() + ((size_t)lane * RC + cb) * COOP_CH; };
  for (int lane = 0; lane < 32; lane++) {
    coop_pieces<G, ST, W16>(a, lane, coop_base(a, 0), coop_valid(a, 0, G), &pc[lane]);
    for (int c = 0; c < ST; c++)
      coop_issue<G, ST, W16>(pc[lane], a.goff, c, lane / G, stage, c < nc);
    coop_ops<G>(a.steps, 0, lane / G, op[lane]);
  }
  for (int64_t k = 0; k < groups; k++) {
    std::fill(sm.begin() + Sh::STAGE, sm.end(), __builtin_nan(""));
    double cy[32][4] = {}, xc[32] = {};
    for (int lane = 0; lane < 32; lane++)
      coop_zero<G>(a, lane, cells);
    for (int c = 0; c < nc; c++) {
      for (int lane = 0; lane < 32; lane++) {
        coop_back_load<G, ST>(a, op[lane], c % ST, lane, stage, cells, &b[lane]);
        coop_ops<G>(a.steps, c + 1 < nc ? c + 1 : nc - 1, lane / G, op[lane]);
      }
      for (int lane = 0; lane < 32; lane++) {
        coop_issue<G, ST, W16>(pc[lane], a.goff, c + ST, lane / G, stage, c + ST < nc);
        coop_back_steps<G>(a, b[lane], lane, cells, cy[lane], c < RC ? kept(lane, c) : nullptr);
      }
    }
    for (int lane = 0; lane < 32; lane++) {
      coop_fwd_hg<G>(op[lane], lane, cells, hg[lane], true);
      go[lane] = coop_goff<G>(a.goff, nc - 1, lane / G);
    }
    const int64_t s0 = k * G, next = (k + 1) * G;
    char *X = reinterpret_cast<char *>(a.rhs + coop_base(a, s0));
    for (int lane = 0; lane < 32 && k + 1 < groups; lane++) {
      coop_pieces<G, ST, W16>(a, lane, coop_base(a, next), coop_valid(a, next, G), &pc[lane]);
      for (int c = 0; c < ST; c++)
        coop_issue<G, ST, W16>(pc[lane], a.goff, c, lane / G, stage, c < nc);
    }
    for (int c = 0; c < nc; c++)
      for (int lane = 0; lane < 32; lane++)
        coop_fwd<G>(a, a.steps, a.goff, c, lane, cells, X + 8 * (lane % G),
                    lane % G < coop_valid(a, s0, G), xc[lane], op[lane], hg[lane], go[lane],
                    c >= nc - RC ? kept(lane, nc - 1 - c) : nullptr);
  }
}

template <int G, bool W16> void coop_emulate_g(const CoopArgs &a, int stages) {
  stages == 2   ? coop_emulate_t<G, 2, W16>(a)
  : stages == 3 ? coop_emulate_t<G, 3, W16>(a)
  : stages == 5 ? coop_emulate_t<G, 5, W16>(a)
  : stages == 6 ? coop_emulate_t<G, 6, W16>(a)
  : stages == 8 ? coop_emulate_t<G, 8, W16>(a)
                : coop_emulate_t<G, 4, W16>(a);
}

template <bool W16> void coop_emulate_w(const CoopArgs &a, const se_hines_coop_config &c) {
  if (c.lanes == 2)
    coop_emulate_g<16, W16>(a, c.stages);
  else if (c.lanes == 4)
    coop_emulate_g<8, W16>(a, c.stages);
  else if (c.lanes == 8)
    coop_emulate_g<4, W16>(a, c.stages);
  else
    coop_emulate_g<2, W16>(a, c.stages);
}

// ---------------------------------------------------------------------------------------------
// Settings and shared memory.


int check_coop_tree(const int32_t *parent, int32_t n, int64_t n_systems, se_hines_layout layout,
                    se_error *err) {
  if (n < 1 || !parent || n_systems < 1)
    SE_FAIL(err, SE_ERR_ARG, "COOP kernel: %d rows, %lld systems (at least 1 each)", n,
            (long long)n_systems);
  if (n_systems >= ((int64_t)1 << 31))
    SE_FAIL(err, SE_ERR_UNSUPPORTED,
            "COOP kernel: %lld systems (the kernel's group counter is 32-bit: fewer than 2^31)",
            (long long)n_systems);
  if (layout == SE_HINES_LAYOUT_FULL && (int64_t)n * n_systems >= ((int64_t)1 << 29))
    SE_FAIL(err, SE_ERR_UNSUPPORTED,
            "COOP kernel: %d rows x %lld systems in the full layout (32-bit byte offsets of the "
            "rows: fewer than 2^29)",
            n, (long long)n_systems);
  if (layout != SE_HINES_LAYOUT_FULL && layout != SE_HINES_LAYOUT_BLOCK)
    SE_FAIL(err, SE_ERR_ARG, "COOP kernel: needs the full or block layout (systems adjacent in "
                             "each row), not %s",
            se_hines_layout_name(layout));
  return se_hines_check_parents(parent, n, "COOP kernel", err);
}

// The settings asked for, with the defaults for the fields left 0 (warps and stages stay 0:
// coop_fit).
int coop_settings(const se_hines_coop_config *req, se_hines_coop_config *out, se_error *err) {
  se_hines_coop_config c = {4, 0, 0, 1, SE_HINES_COOP_REG_AUTO};
  if (req) {
    if (req->lanes)
      c.lanes = req->lanes;
    if (req->stages)
      c.stages = req->stages;
    c.warps = req->warps;
    if (req->ctas_per_sm)
      c.ctas_per_sm = req->ctas_per_sm;
    c.registers = req->registers;
  }
  if (c.lanes != 2 && c.lanes != 4 && c.lanes != 8 && c.lanes != 16)
    SE_FAIL(err, SE_ERR_ARG, "COOP kernel: %d lanes per system (2, 4, 8 or 16)", c.lanes);
  if (c.stages != 0 && (c.stages < 2 || c.stages > 8 || c.stages == 7))
    SE_FAIL(err, SE_ERR_ARG, "COOP kernel: %d pipeline stages (2, 3, 4, 5, 6 or 8)", c.stages);
  if (c.warps < 0 || c.warps > 16)
    SE_FAIL(err, SE_ERR_ARG, "COOP kernel: %d warps per CTA (1..16, 0 = automatic)", c.warps);
  if (c.ctas_per_sm < 1 || c.ctas_per_sm > 16)
    SE_FAIL(err, SE_ERR_ARG, "COOP kernel: %d CTAs per multiprocessor (1..16)", c.ctas_per_sm);
  if (c.registers < SE_HINES_COOP_REG_AUTO || c.registers > SE_HINES_COOP_REG_ON)
    SE_FAIL(err, SE_ERR_ARG, "COOP kernel: register rows %d (0 automatic, 1 off, 2 on)",
            c.registers);
  if (c.registers == SE_HINES_COOP_REG_ON && (c.lanes != 8 || c.warps > 8))
    SE_FAIL(err, SE_ERR_ARG,
            "COOP kernel: register rows need 8 lanes and at most 8 warps per CTA (%d lanes, %d "
            "warps)",
            c.lanes, c.warps);
  *out = c;
  return SE_OK;
}

// Shared memory per CTA for the settings c (lanes and CTAs per multiprocessor set).
size_t coop_budget(const se_hines_coop_config &c, const se_hines_device_limits &lim) {
  size_t budget = lim.smem_per_sm / (size_t)c.ctas_per_sm;
  budget = budget > lim.smem_reserved ? budget - lim.smem_reserved : 0;
  return budget > lim.smem_optin ? lim.smem_optin : budget;
}

// Shared memory of one warp with `stages` stages and `cells` row cells (bytes).
size_t coop_warp_bytes(int cells, const CoopTree &t, int G, int stages) {
  return 8 * ((size_t)stages * COOP_CH * 128 + 2 * (size_t)G * (size_t)(cells + t.K + 2));
}

// Warps per CTA of the settings c with `stages` stages and `cells` row cells: c.warps, or with
// c.warps = 0 as many as the shared memory holds, at most `most` and no more than spreads the
// systems over every multiprocessor; *fit: the warps the shared memory holds.
long coop_warps(int cells, int64_t S, const CoopTree &t, const se_hines_coop_config &c,
                int stages, long most, const se_hines_device_limits &lim, long *fit) {
  const int G = 32 / c.lanes;
  const size_t budget = coop_budget(c, lim);
  const size_t steps_bytes = 8 * (size_t)coop_table_words(t.MB * c.lanes);
  const size_t warp_bytes = coop_warp_bytes(cells, t, G, stages);
  *fit = budget > steps_bytes ? (long)((budget - steps_bytes) / warp_bytes) : 0;
  if (c.warps > 0)
    return c.warps;
  const int64_t warps_total = (S + G - 1) / G;
  const int64_t spread = (warps_total + lim.sms - 1) / lim.sms;
  const long w = *fit < most ? *fit : most;
  return spread < w ? (long)spread : w;
}

// The stages of c (c.stages, or with c.stages = 0 the deeper pipeline of 6 or 5 stages where it
// keeps the warps of 4 stages, else 4; session 5, run 4: medium L 4 with 6 stages 64.0% of copy
// against 61.1%, small-high L 2 with 5 stages 84.8% against 84.2%; session 7, with the groups
// from a counter: big-high L 8 (3 warps) 62.1% against 56.2%, big-low 44.3% against 41.0%, where
// the fixed order had measured deeper pipelines 1-2 points slower at 2 or 3 warps per CTA) and
// its warps per CTA (coop_warps), for `cells` row cells and at most `most` warps. `deepest`: 6,
// or 5 for the kernels with register rows (session 9, list schedule: 5 stages fastest or within
// 2% of it on the big and medium classes on block 4, 6 stages 4-15% slower than 5).
void coop_shape(int cells, int64_t S, const CoopTree &t, const se_hines_coop_config &c, long most,
                int deepest, const se_hines_device_limits &lim, int *stages, long *warps,
                long *fit) {
  *stages = c.stages;
  if (c.stages == 0) {
    const long w4 = coop_warps(cells, S, t, c, 4, most, lim, fit);
    *stages = 4;
    for (int st = deepest; st >= 5; st--) {
      long fit_st = 0;
      coop_warps(cells, S, t, c, st, most, lim, &fit_st);
      if (w4 >= 1 && fit_st >= w4) {
        *stages = st;
        break;
      }
    }
  }
  *warps = coop_warps(cells, S, t, c, *stages, most, lim, fit);
}

// Fits the settings c to the plan t of S systems: the register rows (8 lanes, COOP_REG_CHUNKS
// chunks, which the chunks whose stage takes later copies must cover; c.registers AUTO: with
// them where they hold more warps, or as many with a deeper pipeline, than without, and where
// each array of a warp's group is contiguous (`together`: a block of one warp's systems): there
// big-high's fourth warp measured 78.5% of copy against 65.1% with three, on block 32 60.4%
// against 61.6%, docs/gpu-hines.md "Session 8"; and with one CTA per multiprocessor: session 9,
// big-low 2 CTAs of 2 warps 2.20 ms against 1 CTA of 5 warps 2.03 ms, big-high 2.33 against
// 2.03), the stages and warps per CTA (coop_shape) and the shared memory; fills *info.
int coop_fit(int32_t n, int64_t S, const CoopTree &t, se_hines_coop_config c, bool together,
             const se_hines_device_limits &lim, se_hines_coop_info *info, se_error *err) {
  const int G = 32 / c.lanes;
  long fit = 0, warps = 0, warps_reg = 0;
  int stages = 0, stages_reg = 0, reg_steps = 0, cells = n;
  coop_shape(n, S, t, c, 16, 6, lim, &stages, &warps, &fit);
  if (c.lanes == 8 && c.registers != SE_HINES_COOP_REG_OFF && c.warps <= 8) {
    long fit_reg = 0;
    coop_shape(t.reg_cells, S, t, c, 8, 5, lim, &stages_reg, &warps_reg, &fit_reg);
    const bool room = t.MB / COOP_CH - stages_reg >= COOP_REG_CHUNKS;
    const bool gain = together && c.ctas_per_sm <= 1 &&
                      (warps_reg > warps || (warps_reg == warps && stages_reg > stages));
    if (room && (c.registers == SE_HINES_COOP_REG_ON || gain)) {
      reg_steps = COOP_CH * COOP_REG_CHUNKS;
      stages = stages_reg;
      warps = warps_reg;
      fit = fit_reg;
      cells = t.reg_cells;
    } else if (c.registers == SE_HINES_COOP_REG_ON) {
      SE_FAIL(err, SE_ERR_UNSUPPORTED,
              "COOP kernel: register rows need %d chunks before the last %d (the plan has %d)",
              COOP_REG_CHUNKS, stages_reg, t.MB / COOP_CH);
    }
  }
  c.stages = stages;
  c.warps = (int)warps;
  c.registers = reg_steps ? SE_HINES_COOP_REG_ON : SE_HINES_COOP_REG_OFF;
  const size_t steps_bytes = 8 * (size_t)coop_table_words(t.MB * c.lanes);
  const size_t warp_bytes = coop_warp_bytes(cells, t, G, c.stages);
  const size_t budget = coop_budget(c, lim);
  if (c.warps < 1 || (long)c.warps > fit)
    SE_FAIL(err, SE_ERR_UNSUPPORTED,
            "COOP kernel (%d lanes, %d stages, %d CTAs/SM): a warp needs %zu B of shared memory "
            "and the CTA's step table %zu B; %zu B per CTA hold %ld warps",
            c.lanes, c.stages, c.ctas_per_sm, warp_bytes, steps_bytes, budget, fit);
  memset(info, 0, sizeof *info);
  info->cfg = c;
  info->systems_per_warp = G;
  info->steps = t.MB;
  info->bin_rows = t.bin_rows;
  info->trunk_rows = t.upper_rows;
  info->levels = t.levels;
  info->roots = t.K;
  info->shared_bytes = steps_bytes + (size_t)c.warps * warp_bytes;
  info->reg_steps = reg_steps;
  info->cells = cells + t.K + 2;
  info->lane_use = (double)n / ((double)c.lanes * (double)t.MB);
  return SE_OK;
}

// The plan of c's lanes for row stride rs (table offsets), its settings fitted (coop_fit).
int coop_plan_tree(const int32_t *parent, int32_t n, int64_t S, uint32_t rs, bool together,
                   const se_hines_coop_config &c, const se_hines_device_limits &lim, CoopTree *t,
                   se_hines_coop_info *info, se_error *err) {
  const int G = 32 / c.lanes;
  // a cheap lower bound first: the cells of n rows for one warp
  if ((size_t)n * (size_t)G * 16 > coop_budget(c, lim))
    SE_FAIL(err, SE_ERR_UNSUPPORTED,
            "COOP kernel: %d rows x %d systems per warp x 16 B do not fit %zu B of shared "
            "memory per CTA",
            n, G, coop_budget(c, lim));
  SE_TRY(coop_build(parent, n, c.lanes, t, err));
  SE_TRY(coop_fit(n, S, *t, c, together, lim, info, err));
  coop_encode(t, G, rs, info->reg_steps);
  return SE_OK;
}

// Row stride of a layout (FULL: S; BLOCK: BS).
uint32_t coop_stride(se_hines_layout layout, int64_t S, int32_t bs) {
  return (uint32_t)(layout == SE_HINES_LAYOUT_FULL ? S : bs);
}

// Whether each array of a warp's group is one contiguous run, row after row (BLOCK with a block
// of one warp's systems).
bool coop_together(se_hines_layout layout, int32_t bs, int lanes) {
  return layout == SE_HINES_LAYOUT_BLOCK && bs == 32 / lanes;
}

// SE_OK when a warp's systems (32 / lanes) lie in one block of the BLOCK layout (BS a multiple
// of them: the copies and x stores of a group are offsets from its first system's row 0).
int coop_block_fits(se_hines_layout layout, int32_t bs, int lanes, se_error *err) {
  if (layout == SE_HINES_LAYOUT_BLOCK && bs % (32 / lanes) != 0)
    SE_FAIL(err, SE_ERR_UNSUPPORTED,
            "COOP kernel: %d lanes serve %d systems per warp, more than a block of %d holds",
            lanes, 32 / lanes, bs);
  return SE_OK;
}

// Resolves the settings asked for and builds the plan.
int coop_resolve(const int32_t *parent, int32_t n, int64_t S, se_hines_layout layout, int32_t bs,
                 const se_hines_coop_config *req, const se_hines_device_limits &lim, CoopTree *t,
                 se_hines_coop_info *info, se_error *err) {
  se_hines_coop_config c;
  SE_TRY(coop_settings(req, &c, err));
  SE_TRY(coop_block_fits(layout, bs, c.lanes, err));
  return coop_plan_tree(parent, n, S, coop_stride(layout, S, bs),
                        coop_together(layout, bs, c.lanes), c, lim, t, info, err);
}


CoopArgs coop_args(const se_hines_batch_view &v, const CoopTree &t, const se_hines_coop_info &info,
                   const int4 *steps, const uint32_t *goff, const double *u, const double *l,
                   const double *d, double *rhs) {
  CoopArgs a;
  a.layout = (int)v.layout;
  a.n = v.n;
  a.bs = v.layout == SE_HINES_LAYOUT_BLOCK ? v.bs : 1;
  a.S = v.n_systems;
  a.MB = t.MB;
  a.root0 = t.cells;
  a.zero = t.cells + t.K;
  a.warp_words = (int)(coop_warp_bytes(t.cells, t, info.systems_per_warp, info.cfg.stages) / 8);
  a.reg_chunks = t.RS / COOP_CH;
  a.steps = steps;
  a.goff = goff;
  a.u = u;
  a.l = l;
  a.d = d;
  a.rhs = rhs;
  a.next = nullptr;
  return a;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// The plan object.

struct se_hines_coop {
  const se_hines_batch *batch;
  CoopTree tree;
  se_hines_coop_info info;
  bool w16;
  unsigned *d_next; // the kernel's group counter (0 between solves: the kernel resets it)
  unsigned grid; // CTAs of a solve: as many as are resident at once, at most one per 32 W G systems
  int4 *d_steps;
  uint32_t *d_goff;
};

extern "C" void se_hines_coop_destroy(se_hines_coop *p) {
  if (!p)
    return;
  cudaFree(p->d_steps);
  cudaFree(p->d_goff);
  cudaFree(p->d_next);
  delete p;
}

static int coop_create_inner(se_hines_coop *p, const se_hines_batch_view &v,
                             const se_hines_coop_config *cfg, se_error *err) {
  const se_hines_device_limits &lim = v.limits;
  SE_TRY(check_coop_tree(v.parent, v.n, v.n_systems, v.layout, err));
  SE_TRY(coop_resolve(v.parent, v.n, v.n_systems, v.layout, v.bs, cfg, lim, &p->tree, &p->info,
                      err));
  p->w16 = se_hines_copy16(v.layout, v.n_systems);
  const size_t bytes = p->tree.enc.size() * sizeof(int4);
  const size_t gbytes = p->tree.goff.size() * sizeof(uint32_t);
  SE_CUDA_CHECK(err, cudaMalloc((void **)&p->d_steps, bytes));
  SE_CUDA_CHECK(err, cudaMalloc((void **)&p->d_goff, gbytes));
  SE_CUDA_CHECK(err, cudaMalloc((void **)&p->d_next, sizeof(unsigned)));
  SE_CUDA_CHECK(err, cudaMemset(p->d_next, 0, sizeof(unsigned)));
  SE_CUDA_CHECK(err, cudaMemcpy(p->d_steps, p->tree.enc.data(), bytes, cudaMemcpyHostToDevice));
  SE_CUDA_CHECK(err, cudaMemcpy(p->d_goff, p->tree.goff.data(), gbytes, cudaMemcpyHostToDevice));
  // the uploads' DMA (legacy stream) done before a non-blocking stream's kernel reads them
  SE_CUDA_CHECK(err, cudaDeviceSynchronize());
  coop_kernel_fn fn = coop_kernel(p->info, p->w16);
  SE_CUDA_CHECK(err, cudaFuncSetAttribute((const void *)fn,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)lim.smem_optin)); // any plan of this kernel
  SE_CUDA_CHECK(err, cudaFuncSetAttribute((const void *)fn,
                                          cudaFuncAttributePreferredSharedMemoryCarveout,
                                          (int)cudaSharedmemCarveoutMaxShared));
  int ctas = 0;
  SE_CUDA_CHECK(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                         &ctas, (const void *)fn, 32 * p->info.cfg.warps, p->info.shared_bytes));
  if (ctas < 1)
    SE_FAIL(err, SE_ERR_UNSUPPORTED,
            "COOP kernel: a CTA of %d warps with %zu B of shared memory does not fit a "
            "multiprocessor",
            p->info.cfg.warps, p->info.shared_bytes);
  const int64_t G = p->info.systems_per_warp, W = p->info.cfg.warps;
  const int64_t blocks = ((v.n_systems + G - 1) / G + W - 1) / W;
  const int64_t resident = (int64_t)ctas * lim.sms;
  p->grid = (unsigned)(blocks < resident ? blocks : resident);
  return SE_OK;
}

extern "C" int se_hines_coop_create(const se_hines_batch *batch, const se_hines_coop_config *cfg,
                                    se_hines_coop **plan, se_error *err) {
  *plan = NULL;
  se_hines_coop *p = new (std::nothrow) se_hines_coop();
  if (!p)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for a COOP plan");
  se_hines_batch_view v;
  se_hines_batch_get_view(batch, &v);
  p->batch = batch;
  const int rc = coop_create_inner(p, v, cfg, err);
  if (rc != SE_OK) {
    se_hines_coop_destroy(p);
    return rc;
  }
  *plan = p;
  return SE_OK;
}

extern "C" void se_hines_coop_get_info(const se_hines_coop *p, se_hines_coop_info *info) {
  *info = p->info;
}

extern "C" void se_hines_coop_get_plan_info(const se_hines_coop *p, se_hines_plan_info *info) {
  memset(info, 0, sizeof *info);
  info->kernel = SE_HINES_KERNEL_COOP;
  info->shared_bytes = p->info.shared_bytes;
  info->threads_per_cta = 32 * p->info.cfg.warps;
  info->copy16 = p->w16;
  info->model_bytes = 40.0;
  info->coop_lanes = p->info.cfg.lanes;
  info->coop_ctas_per_sm = p->info.cfg.ctas_per_sm;
}

extern "C" int se_hines_coop_solve(const se_hines_coop *p, se_hines_batch *batch, se_error *err) {
  if (p->batch != batch)
    SE_FAIL(err, SE_ERR_ARG, "COOP solve: the plan was made for another batch");
  se_hines_batch_view v;
  se_hines_batch_get_view(batch, &v);
  CoopArgs a = coop_args(v, p->tree, p->info, p->d_steps, p->d_goff, v.u, v.l, v.d, v.rhs);
  a.next = p->d_next;
  coop_kernel_fn fn = coop_kernel(p->info, p->w16);
  fn<<<p->grid, 32 * p->info.cfg.warps, p->info.shared_bytes, v.stream>>>(a);
  SE_CUDA_CHECK_LAUNCH(err, "the COOP kernel");
  return SE_OK;
}

extern "C" int se_hines_coop_emulate(const int32_t *parent, int32_t n, int64_t n_systems,
                                     se_hines_layout layout, int32_t bs,
                                     const se_hines_coop_config *cfg, const double *u,
                                     const double *l, const double *d, double *rhs,
                                     se_hines_coop_info *info, se_error *err) {
  SE_TRY(check_coop_tree(parent, n, n_systems, layout, err));
  if (layout == SE_HINES_LAYOUT_BLOCK && !se_hines_block_size_ok(bs))
    SE_FAIL(err, SE_ERR_ARG, "COOP emulation: block size %d (4, 8, 16, 32, 64 or 128)", bs);
  se_hines_coop_config c = cfg ? *cfg : se_hines_coop_config{0, 0, 0, 0, 0};
  c.warps = 1;
  c.ctas_per_sm = 1;
  CoopTree t;
  se_hines_coop_info inf;
  SE_TRY(coop_resolve(parent, n, n_systems, layout, bs, &c, *se_hines_h200_limits(), &t, &inf,
                      err));
  se_hines_batch_view v;
  memset(&v, 0, sizeof v);
  v.n = n;
  v.bs = bs;
  v.n_systems = n_systems;
  v.layout = layout;
  const CoopArgs a = coop_args(v, t, inf, t.enc.data(), t.goff.data(), u, l, d, rhs);
  if (se_hines_copy16(layout, n_systems))
    coop_emulate_w<true>(a, inf.cfg);
  else
    coop_emulate_w<false>(a, inf.cfg);
  if (info)
    *info = inf;
  return SE_OK;
}

// The automatic COOP settings (docs/gpu-hines.md, "Automatic settings"), costed in
// multiprocessor cycles like the STREAM candidates of hines_mono.cu (se_hines_auto_cost):
//   bytes    40 x compartments / (SMs x bytes per cycle and SM)
//   latency  rounds x steps x tau, rounds = groups / resident warps (at least 1: the counter
//            shares the groups evenly), tau = COOP_STEP_CYCLES + COOP_STEP_CYCLES_WARP x
//            max(0, w - 1): a step (backward and forward) costs a warp COOP_STEP_CYCLES when
//            it has its scheduler to itself; each further warp on the scheduler (w warps)
//            adds COOP_STEP_CYCLES_WARP
// cost = max + 1/4 min. The two constants are fitted (least squares of the log ratio, grid of
// 2 cycles) to the 34 measured times of L 2, 4, 8 x 1, 2 CTAs, automatic stages, at 256 000
// neurons of session 7's third device run (groups from the counter; rms error 9%, the largest
// errors at L 8 on the medium classes, up to 19% optimistic, and big-high L 8 with 2 CTAs, 30%
// pessimistic, none of them a choice; docs/bench/gpu_hines_s7_candidates.csv).
static const double COOP_STEP_CYCLES = 246.0;
static const double COOP_STEP_CYCLES_WARP = 248.0;

// Candidates: lanes 4, 2, 8 (one plan each) x 1, 2 CTAs per multiprocessor; ties go to the
// earlier candidate: 1 CTA before 2 (run 4: 1 CTA measured 2-9% faster on the medium and big
// classes, 3% slower on small-low). Not 8 lanes on the full layout: a warp's row is then 32 B of
// a row of S systems, each row of its group in another DRAM page (big-high 39.8% of copy in
// session 8, big-low 38.5% in session 9, where STREAM moves 48.8%; 64 B and more at 4 and 2
// lanes: 80-89%).
static const int coop_candidate_lanes[] = {4, 2, 8};
static const int coop_candidate_ctas[] = {1, 2};

// Cost of a fitted candidate in multiprocessor cycles (the model above).
static double coop_cost(const se_hines_coop_info &info, int32_t n, int64_t n_systems,
                        const se_hines_device_limits &lim) {
  const int G = info.systems_per_warp, W = info.cfg.warps;
  const int64_t groups = (n_systems + G - 1) / G;
  double waves;
  int64_t resident; // CTAs per multiprocessor
  se_hines_auto_waves((groups + W - 1) / W, info.cfg.ctas_per_sm, lim.sms, &waves, &resident);
  // the persistent warps share the groups evenly (the counter): rounds need not be whole
  const double rounds = (double)groups / ((double)resident * lim.sms * W);
  const double w = (double)(resident * W) / 4.0; // warps per scheduler
  const double tau = COOP_STEP_CYCLES + COOP_STEP_CYCLES_WARP * (w > 1.0 ? w - 1.0 : 0.0);
  return se_hines_auto_cost(40.0, n, n_systems, lim.sms,
                            (rounds > 1.0 ? rounds : 1.0) * (double)info.steps * tau);
}

extern "C" int se_hines_coop_choose(const int32_t *parent, int32_t n, int64_t n_systems,
                                    se_hines_layout layout, int32_t bs,
                                    const se_hines_device_limits *lim, se_hines_coop_config *cfg,
                                    double *cycles, se_error *err) {
  SE_TRY(check_coop_tree(parent, n, n_systems, layout, err));
  bool found = false;
  se_error last = {SE_OK, {0}};
  for (int lanes : coop_candidate_lanes) {
    if (coop_block_fits(layout, bs, lanes, &last) != SE_OK)
      continue; // a block of fewer systems than a warp of these lanes serves
    if (layout == SE_HINES_LAYOUT_FULL && lanes > 4)
      continue;
    CoopTree t; // built once for the lanes (first CTA count), fitted for the others
    for (size_t k = 0; k < sizeof coop_candidate_ctas / sizeof *coop_candidate_ctas; k++) {
      const se_hines_coop_config want = {lanes, 0, 0, coop_candidate_ctas[k],
                                         SE_HINES_COOP_REG_AUTO};
      se_hines_coop_info info;
      se_error e2 = {SE_OK, {0}};
      const bool together = coop_together(layout, bs, lanes);
      const int rc = k ? coop_fit(n, n_systems, t, want, together, *lim, &info, &e2)
                       : coop_plan_tree(parent, n, n_systems, 1, together, want, *lim, &t, &info,
                                        &e2);
      if (rc == SE_ERR_UNSUPPORTED) { // more CTAs per multiprocessor have less shared memory each
        last = e2;
        break;
      }
      if (rc != SE_OK) {
        *err = e2;
        return rc;
      }
      const double cost = coop_cost(info, n, n_systems, *lim);
      if (!found || cost < *cycles) {
        found = true;
        *cycles = cost;
        *cfg = info.cfg;
      }
    }
  }
  if (!found) {
    if (last.code == SE_OK)
      se_error_set(&last, SE_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                   "COOP kernel: no candidate setting fits the shared memory");
    *err = last;
    return last.code;
  }
  return SE_OK;
}

