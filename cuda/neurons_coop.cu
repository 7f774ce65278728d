// The cooperative ("coop") step kernel (src/neurons_coop.h, docs/gpu.md "coop"): one warp per G
// adjacent cells of a group, L = 32 / G threads per cell (thread j of cell c is warp lane
// j * G + c), every intermediate of the step in shared memory. fused2's per-row arithmetic
// (neurons_stream.h) on the same values in the same order; the host model se_coop_reference_step
// performs the same phases. Each phase loads the plan records of its coming steps while a step
// computes: phase 1b and the events through a ring in shared memory (cp.async), phases 0 and 3b
// through it too by stage_short (else register rings), the hh phase 1a one step ahead in
// registers. Measured: docs/gpu.md "coop measured".
#include <type_traits>

#include "async_copy.cuh"
#include "neurons_coop_cuda.h"
#include "neurons_device.cuh"
#include "neurons_math.h"

namespace {

__device__ __forceinline__ double2 ld_d2(const se_coop_chunk *p) {
  return __ldg(reinterpret_cast<const double2 *>(p));
}
__device__ __forceinline__ int4 ld_i4(const se_coop_chunk *p) {
  return __ldg(reinterpret_cast<const int4 *>(p));
}
// A chunk as the double pointer the copies of async_copy.cuh take.
__device__ __forceinline__ double *dbl(se_coop_chunk *p) { return reinterpret_cast<double *>(p); }
__device__ __forceinline__ const double *dbl(const se_coop_chunk *p) {
  return reinterpret_cast<const double *>(p);
}

// A cell's shared-memory slot at byte offset off (the records' offsets) from its slot 0, base.
__device__ __forceinline__ double &at(char *base, int off) {
  return *reinterpret_cast<double *>(base + off);
}

// What phase 1b reads of a step's row record (q0-q2), what phase 1a reads of an hh step (its
// record and its row's state), what phase 2 reads of an event: loaded steps ahead of their use.
struct row_rec {
  double2 dg;
  int4 q1, q2;
};
struct hh_rec {
  int4 q4;
  double2 gk, e, ac;
  double d, v, m, h, n;
};
struct ev_rec {
  double2 dg;
  int4 q1, q2, q3;
};

// Phase 1b stages its records R - 1 steps ahead through a ring of R steps in shared memory. Where
// phases 0 and 3b do not stage theirs (stage_short off), each keeps the records of its next R2 - 1
// steps in a register ring of R2 entries, its loop unrolled R2 times so that a step's ring index
// is a constant and the load of step k + R2 - 1 goes to the entry of step k - 1 (no register
// moves). Steps and events are multiples of R and the row tables padded (neurons_coop.h): no test
// of a range's end (phases 0 and 3b: one per R steps staged, 2 R in registers), no clamp of the
// loads ahead.
constexpr int R = SE_COOP_RING, R2 = 2 * SE_COOP_RING;

template <int L>
__global__ void __launch_bounds__(32, SE_COOP_MAX_WARPS_PER_SM)
    step_coop(const se_neurons_device d, const se_coop_device cp, double t_now, int update) {
  constexpr int G = 32 / L, OFF1 = G * (int)sizeof(double); // the next slot's offset
  extern __shared__ double smem[];
  const int c = (int)threadIdx.x % G, j = (int)threadIdx.x / G;
  const int64_t warp = blockIdx.x, gi = warp / cp.warps_per_group;
  const se_group grp = d.groups[gi];
  const int cl = (int)(warp % cp.warps_per_group) * G + c; // the cell's lane in its group
  const bool on = cl < grp.lanes;
  const se_coop_morph *const mo = cp.morph + grp.morphology;
  const int lo = mo->s[j], hi = mo->s[j + 1];
  const int64_t W = d.width, t = gi * W + cl, s0 = grp.base + (on ? cl : 0);
  // the clamp list's bounds first: t does not wait for the group's record (cl < W: t is a thread
  // of the layout, so its bounds exist)
  const int64_t kbeg_t = cl < W ? d.stim_ptr[t] : 0, kend_t = cl < W ? d.stim_ptr[t + 1] : 0;
  const int cl0 = (int)(warp % cp.warps_per_group) * G; // the warp's first lane
  // the warp's steps and events: the lanes walk them together where the records are staged in
  // batches (the lanes without a cell copy and wait, their results go nowhere)
  const int steps_w = cl0 < grp.lanes ? mo->steps : 0, nev_w = steps_w > 0 ? mo->n_ev : 0;
  double *const S = smem + c; // slot x of this cell at S[x * G]
  char *const B = reinterpret_cast<char *>(S); // ... at byte offset x * G * 8
  double *const V = d.v + s0, *const Mg = d.m + s0, *const Hg = d.h + s0, *const Ng = d.n + s0;
  const se_coop_chunk *const rec = cp.rec + mo->rec + j; // chunk q of step k: rec[(4k + q) L]
  const int nj = on ? hi - lo : 0;      // this thread's rows
  const int steps = on ? mo->steps : 0; // the warp's steps (a multiple of R)
  // step k of this thread's range: row hi - 1 - k, slot k L + j at S + k * 32 + j G
  double *const Sj = S + j * G;
  // the ring of staged records after the slots: phase 1b's, then in turn phase 3b's, the events'
  // and phase 0's batches (se_coop_warp_smem)
  se_coop_chunk *const ring = reinterpret_cast<se_coop_chunk *>(smem + (int64_t)cp.slots * G);
  // stage_short: the records of phases 0 and 3b staged in batches of G steps through 3 batches of
  // the ring (2 batches ahead; cp.async groups complete in order, where a register ring's loads
  // share one scoreboard and a step waits for the loads it has just issued): lane (j, c) copies
  // chunk q of thread j's step b G + c (down: counted from the last step), entry
  // (b % 3) 32 + c L + j; a commit group per batch, empty past the end
  auto stage_rows = [&](int b, int q, bool down) {
    const int kk = b * G + c, k = down ? steps_w - 1 - kk : kk;
    if (kk < steps_w)
      copy16_async(dbl(ring + (b % 3) * 32 + c * L + j), dbl(rec + (4 * k + q) * L));
    copy_commit();
  };

  const se_coop_chunk *const hrec = cp.hh + mo->hh + j; // chunk q of hh step k: hrec[(5k + q) L]
  const int hsteps = on ? mo->hh_steps : 0;
  auto load_hh_record = [&](int k) {
    const se_coop_chunk *q = hrec + 5 * k * L;
    hh_rec r;
    r.q4 = ld_i4(q + 4 * L);
    r.gk = ld_d2(q);
    r.e = ld_d2(q + L);
    r.ac = ld_d2(q + 2 * L);
    r.d = ld_d2(q + 3 * L).x;
    return r;
  };
  // the first hh step's record before the v copies, its row's state after them
  hh_rec hn = hsteps > 0 ? load_hh_record(0) : hh_rec{};

  // ---- 0: v of this thread's rows into their slots (asynchronous copies, all in flight at
  // once), then a v + c at each of them (0 at hh rows: 1a makes their b0), then the clamps ----
  if (cp.v_wide && (reinterpret_cast<uintptr_t>(d.v + grp.base) & 15) == 0) {
    // the warp copies together, 16 bytes at a time past the L1 (cp.async.cg): the G cells' v of
    // a row are G * 8 contiguous bytes in global memory (the width a multiple of G: attach) and
    // in shared memory; thread (j, c) copies chunk c % CH of rows k = c / CH, c / CH + 2, ...
    // of range j
    constexpr int CH = G / 2;
    const int q = c % CH, k0 = c / CH, nrows = cl0 < grp.lanes ? hi - lo : 0;
    const double *vk = d.v + grp.base + cl0 + 2 * q + (int64_t)(hi - 1 - k0) * W;
    unsigned sk = (unsigned)__cvta_generic_to_shared(smem + (k0 * 32 + j * G + 2 * q));
    for (int k = k0; k < nrows; k += 2, vk -= 2 * W, sk += 64 * sizeof(double))
      copy16_async_s_l2(sk, vk); // the warp copies G x 8 B of a row: part of a 128-B line
  } else {
    const double *vk = V + (int64_t)(hi - 1) * W; // row hi - 1 - k
    unsigned sk = (unsigned)__cvta_generic_to_shared(Sj);
    for (int k = 0; k < nj; k++, vk -= W, sk += 32 * sizeof(double))
      copy8_async_s(sk, vk);
  }
  // an hh step's row state past the L1 (ld.global.cg), which it leaves to the plan's records
  auto load_hh_state = [&](hh_rec &r) {
    r.v = r.m = r.h = r.n = 0.0;
    if (r.q4.x >= 0) {
      const int64_t o = (int64_t)r.q4.x * W;
      r.v = __ldcg(V + o);
      r.m = __ldcg(Mg + o);
      r.h = __ldcg(Hg + o);
      r.n = __ldcg(Ng + o);
    }
  };
  auto load_hh = [&](int k) {
    hh_rec r = load_hh_record(k);
    load_hh_state(r);
    return r;
  };
  if (hsteps > 0) // the first hh step's state, loaded while the copies are in flight
    load_hh_state(hn);
  const double v_root = on && j == 0 ? V[0] : 0.0;
  const int64_t kbeg = on ? kbeg_t : 0, kend = on ? kend_t : 0;
  // q3 of step k0 + u at p0[(4 u + 3) L], the slot of step k0 + u at y0[u * 32]
  const se_coop_chunk *p0 = rec;
  double2 ac[R2];
  if (cp.stage_short) { // q3 of the first two batches, in flight with the v copies
    stage_rows(0, 3, false);
    stage_rows(1, 3, false);
  } else {
#pragma unroll
    for (int u = 0; u < R2 - 1; u++)
      ac[u] = ld_d2(p0 + (4 * u + 3) * L);
  }
  asm volatile("cp.async.wait_all;" ::: "memory");
  __syncwarp(); // the warp's copies fill the slots of every cell
  if (cp.stage_short) { // the lanes without a cell compute on their own (unused) slots
    for (int b = 0; b * G < steps_w; b++) {
      copy_wait<1>();
      __syncwarp(); // batch b landed; batch b - 1 read by all
      stage_rows(b + 2, 3, false);
      const se_coop_chunk *const e = ring + (b % 3) * 32 + j;
      double *const y = Sj + b * G * 32;
#pragma unroll
      for (int u = 0; u < G; u++) {
        if (u > 0 && u % R == 0 && b * G + u >= steps_w) // steps is a multiple of R
          break;
        const double2 a = *reinterpret_cast<const double2 *>(e + u * L);
        y[u * 32] = a.x * y[u * 32] + a.y;
      }
    }
  } else {
    double *y0 = Sj;
    for (int k0 = 0; k0 < steps; k0 += R2, p0 += 4 * R2 * L, y0 += R2 * 32) {
#pragma unroll
      for (int u = 0; u < R2; u++) {
        if (u == R && k0 + R >= steps) // steps is a multiple of R
          break;
        ac[(u + R2 - 1) % R2] = ld_d2(p0 + (4 * (u + R2 - 1) + 3) * L);
        y0[u * 32] = ac[u].x * y0[u * 32] + ac[u].y;
      }
    }
  }
  // the clamps of this thread's rows (the list is by compartment), a compartment's summed from
  // the last first, as fused2: its slot then holds a v + c + bx (bx alone at an hh row)
  const double t_mid = t_now + 0.5 * d.dt;
  double bx = 0.0;
  for (int64_t ks = kend - 1; ks >= kbeg; ks--) {
    const int i = d.stim_comp[ks];
    if (i < lo || i >= hi)
      continue;
    if (se_iclamp_on(t_mid, d.stim_delay[ks], d.stim_duration[ks]))
      bx += d.stim_amplitude[ks];
    if (ks == kbeg || d.stim_comp[ks - 1] != i) {
      Sj[(hi - 1 - i) * 32] += bx;
      bx = 0.0;
    }
  }
  if (on && j == 0)
    at(B, mo->zero) = 0.0;
  __syncwarp();

  // ---- 1a: hh rows spread over the threads: gates, currents, b0 and d0 (the next step's record
  // and state loaded before this one is computed) ----
  for (int k = 0; k < hsteps; k++) {
    const hh_rec r = hn;
    if (k + 1 < hsteps)
      hn = load_hh(k + 1);
    const int i = r.q4.x;
    if (i < 0)
      continue;
    double m = r.m, h = r.h, n = r.n, b = 0.0, dg = 0.0;
    double bh = at(B, r.q4.y); // the clamps' current (phase 0)
    se_hh_row_terms(r.v, &m, &h, &n, update, d.dt, d.q10, r.gk.x, r.gk.y, r.e.x, r.e.y, &b, &dg);
    if (update) {
      Mg[(int64_t)i * W] = m;
      Hg[(int64_t)i * W] = h;
      Ng[(int64_t)i * W] = n;
    }
    bh += b;
    at(B, r.q4.y) = r.ac.x * r.v + r.ac.y + bh;
    at(B, r.q4.z) = r.d + dg;
  }
  __syncwarp();

  // ---- 1b: complete rows eliminated, ranges downwards in lockstep; one path for every kind of
  // row: the record names the accumulators read (the zero slot where none) and the targets of
  // the pushes (the dump slot where none); where the plan marks PLAIN rows, a short path for
  // them (a loop of its own: the compiler predicates short paths, and a morphology without PLAIN
  // rows would pay for it at every step) ----
  // one step of a range: row record r, the row's slot y, the push (cb, cd) to the next row
  auto eliminate_row = [&](const row_rec &r, double *y, double &cb, double &cd, auto with_plain) {
    const uint32_t meta = (uint32_t)r.q1.w;
    if (meta & SE_COOP_TRUNK) { // trunk rows (phase 2) and padding steps
      cb = cd = 0.0;
      return;
    }
    if constexpr (decltype(with_plain)::value) {
      if (meta & SE_COOP_PLAIN) { // fused2's arithmetic with ab = 0: b0 + (cb + 0)
        const double yv = (*y + (cb + 0.0)) * r.dg.x;
        *y = yv;
        cb = r.dg.y * yv;
        cd = 0.0;
        return;
      }
    }
    const double d0 = (meta & SE_STREAM_HH) ? at(B, r.q1.x) : r.dg.x;
    const se_stream_elim el =
        se_stream_eliminate_from(*y, d0, r.dg.y, __hiloint2double(r.q1.y, r.q1.x), meta, cb, cd,
                                 at(B, r.q2.y), at(B, r.q2.z));
    *y = el.y;
    if (!(meta & SE_STREAM_DCONST))
      at(B, r.q1.x) = el.f;
    const bool prev = meta & SE_STREAM_PREV;
    cb = prev ? el.push_b : 0.0;
    cd = prev ? el.push_d : 0.0;
    double &A = at(B, r.q2.x), &D = at(B, r.q2.w);
    A = (meta & SE_STREAM_FIRST) ? el.push_b : A + el.push_b;
    D = (meta & SE_STREAM_DFIRST) ? el.push_d : D + el.push_d;
  };
  // the records staged through a ring of R steps in shared memory (cp.async, R - 1 steps ahead:
  // its groups complete in order, where a register ring's loads share one scoreboard and a step
  // waits for the loads it has just issued), read one step ahead; cell 0's thread j copies range
  // j's records, which the G cells share
  auto eliminate_ranges = [&](auto with_plain) {
    const unsigned on_mask = __ballot_sync(0xFFFFFFFFu, on);
    const se_coop_chunk *p1 = rec; // chunk 0 of step k at p1 + 4 k L
    // chunk q of step k's record of thread j: ring[((k % R) * 3 + q) L + j]
    auto stage = [&](int k) {
      if (c == 0) {
        se_coop_chunk *dst = ring + (k % R) * 3 * L + j;
        const se_coop_chunk *src = p1 + 4 * k * L;
#pragma unroll
        for (int q = 0; q < 3; q++)
          copy16_async(dbl(dst + q * L), dbl(src + q * L));
      }
      copy_commit();
    };
    auto read = [&](int k) {
      const se_coop_chunk *e = ring + (k % R) * 3 * L + j;
      return row_rec{*reinterpret_cast<const double2 *>(e),
                     *reinterpret_cast<const int4 *>(e + L),
                     *reinterpret_cast<const int4 *>(e + 2 * L)};
    };
    if (steps == 0)
      return;
    for (int k = 0; k < R - 1; k++)
      stage(k);
    copy_wait<R - 2>(); // step 0 landed
    __syncwarp(on_mask);
    row_rec r2[2];
    r2[0] = read(0);
    double cb = 0.0, cd = 0.0, *y1 = Sj;
    for (int k0 = 0; k0 < steps; k0 += R, y1 += R * 32) {
#pragma unroll
      for (int u = 0; u < R; u++) {
        const int k = k0 + u;
        copy_wait<R - 3>(); // step k + 1 landed (this thread's copies)
        __syncwarp(on_mask); // ... and every thread's; entry (k - 1) % R read by all
        stage(k + R - 1);
        r2[(u + 1) % 2] = read(k + 1);
        eliminate_row(r2[u % 2], y1 + u * 32, cb, cd, with_plain);
      }
    }
    copy_wait<0>();
  };
  if (mo->plain)
    eliminate_ranges(std::true_type{});
  else
    eliminate_ranges(std::false_type{});
  __syncwarp();

  // ---- 2, 3a: one thread per cell: the events downwards, the trunk upwards ----
  double x_root = 0.0;
  const se_coop_chunk *const ev = cp.ev + mo->ev;
  // event e: its records; phase 2 on it (the push to the next event in cb, cd); phase 3a on it
  auto event_down = [&](const ev_rec &r, double &cb, double &cd) {
    const uint32_t meta = (uint32_t)r.q2.x;
    double pb, pd;
    if (meta & SE_COOP_EV_TRUNK) {
      const double ab = (meta & SE_STREAM_OWN) ? at(B, r.q2.w) : 0.0;
      const double ad = (meta & SE_STREAM_DACC) ? at(B, r.q2.w + OFF1) : 0.0;
      const double d0 = (meta & SE_STREAM_HH) ? at(B, r.q2.y) : r.dg.x;
      const se_stream_elim el = se_stream_eliminate_from(
          at(B, r.q1.z), d0, r.dg.y, __hiloint2double(r.q1.y, r.q1.x), meta, cb, cd, ab, ad);
      at(B, r.q1.z) = el.y;
      if (!(meta & SE_STREAM_DCONST))
        at(B, r.q2.y) = el.f;
      pb = el.push_b;
      pd = el.push_d;
    } else {
      pb = at(B, r.q2.z);
      pd = (meta & SE_STREAM_DCONST) ? 0.0 : at(B, r.q2.z + OFF1);
    }
    se_coop_push_parent(meta, pb, pd, &at(B, r.q3.y), G, &cb, &cd);
  };
  auto event_up = [&](const ev_rec &r) {
    const uint32_t meta = (uint32_t)r.q2.x;
    if (!(meta & SE_COOP_EV_TRUNK))
      return;
    const double y = at(B, r.q1.z);
    const double f = (meta & SE_STREAM_DCONST) ? __hiloint2double(r.q1.y, r.q1.x) : at(B, r.q2.y);
    const double x = (meta & SE_STREAM_ROOT) ? y : y + f * at(B, r.q1.w);
    at(B, r.q1.z) = x;
    V[(int64_t)r.q3.x * W] = x;
    if (meta & SE_STREAM_ROOT)
      x_root = x;
  };
  const bool walker = on && j == 0;
  // the events staged in batches of 8 (32 chunks, one per lane) through 3 batches of the ring, 2
  // ahead; batch b: events 8 b .. 8 b + 7 (up: counted from the last), event 8 b + u at entry
  // (b % 3) 32 + 4 u; the warp's lanes walk the batches together
  const int lane = (int)threadIdx.x;
  auto stage_ev = [&](int b, bool up) {
    const int kk = 8 * b + lane / 4, e = up ? nev_w - 1 - kk : kk;
    if (kk < nev_w)
      copy16_async(dbl(ring + (b % 3) * 32 + lane), dbl(ev + 4 * e + lane % 4));
    copy_commit();
  };
  auto read_ev = [&](const se_coop_chunk *q) {
    return ev_rec{*reinterpret_cast<const double2 *>(q), *reinterpret_cast<const int4 *>(q + 1),
                  *reinterpret_cast<const int4 *>(q + 2), *reinterpret_cast<const int4 *>(q + 3)};
  };
  // the walker's pass over the events, downwards or upwards, step(record) at each; the warp's
  // lanes stage the batches together
  auto walk_events = [&](bool up, auto &&step) {
    stage_ev(0, up);
    stage_ev(1, up);
    for (int b = 0; 8 * b < nev_w; b++) {
      copy_wait<1>();
      __syncwarp(); // batch b landed; batch b - 1 read by all
      stage_ev(b + 2, up);
      if (walker) {
        const se_coop_chunk *const q = ring + (b % 3) * 32;
#pragma unroll
        for (int u = 0; u < 8; u++) {
          if (u == R && 8 * b + R >= nev_w) // n_ev is a multiple of R
            break;
          step(read_ev(q + 4 * u));
        }
      }
    }
  };
  double cb = 0.0, cd = 0.0;
  walk_events(false, [&](const ev_rec &r) { event_down(r, cb, cd); });
  __syncwarp(); // the ring read by all
  walk_events(true, event_up);
  __syncwarp();

  // ---- 3b: complete rows substituted, ranges upwards (a boundary row's record has PREV
  // cleared: it reads its parent's x from the parent's slot) ----
  double xprev = 0.0;
  // the row of step k (its v at v), record q1 (skipped: trunk and padding steps, and every step
  // where absent is SE_COOP_TRUNK)
  auto substitute_row = [&](const int4 &q1, int k, double *v, uint32_t absent) {
    const uint32_t meta = (uint32_t)q1.w;
    if ((meta | absent) & SE_COOP_TRUNK)
      return;
    double *const y = Sj + k * 32;
    const double f = (meta & SE_STREAM_DCONST) ? __hiloint2double(q1.y, q1.x) : at(B, q1.x);
    const double xp = (meta & SE_STREAM_PREV) ? xprev : at(B, q1.z);
    const double x = *y + f * xp;
    *y = x;
    *v = x;
    xprev = x;
  };
  if (cp.stage_short) {
    const uint32_t absent = on ? 0u : SE_COOP_TRUNK; // the lanes without a cell write nothing
    stage_rows(0, 1, true);
    stage_rows(1, 1, true);
    for (int b = 0; b * G < steps_w; b++) {
      copy_wait<1>();
      __syncwarp(); // batch b landed; batch b - 1 read by all
      stage_rows(b + 2, 1, true);
      const se_coop_chunk *const e = ring + (b % 3) * 32 + j;
      double *const vb = V + (int64_t)(hi - steps_w + b * G) * W; // v of step steps_w - 1 - b G
#pragma unroll
      for (int u = 0; u < G; u++) {
        if (u > 0 && u % R == 0 && b * G + u >= steps_w) // steps is a multiple of R
          break;
        substitute_row(*reinterpret_cast<const int4 *>(e + u * L), steps_w - 1 - b * G - u,
                       vb + u * W, absent);
      }
    }
  } else {
    // q1 of step k0 - u at p3[(1 - 4 u) L]
    const se_coop_chunk *p3 = rec + 4 * (steps - 1) * L;
    double *v3 = V + (int64_t)(hi - steps) * W; // v of step k0 - u at v3[u W]
    int4 r3[R2];
#pragma unroll
    for (int u = 0; u < R2 - 1; u++)
      r3[u] = ld_i4(p3 + (1 - 4 * u) * L);
    for (int k0 = steps - 1; k0 >= 0; k0 -= R2, p3 -= 4 * R2 * L, v3 += R2 * W) {
#pragma unroll
      for (int u = 0; u < R2; u++) {
        if (u == R && k0 < R) // steps is a multiple of R
          break;
        r3[(u + R2 - 1) % R2] = ld_i4(p3 + (1 - 4 * (u + R2 - 1)) * L);
        substitute_row(r3[u], k0 - u, v3 + u * W, 0u);
      }
    }
  }

  if (on && j == 0)
    se_root_spike_check(d, d.lane_cell[t], t_now, v_root, x_root);
}

template <int L> void launch_coop(const se_neurons_device *d, const se_coop_device *cp, double t,
                                  int update_gates, cudaStream_t stream) {
  step_coop<L><<<(unsigned)cp->n_warps, 32, se_coop_warp_smem(cp->slots, L), stream>>>(
      *d, *cp, t, update_gates);
}

} // namespace

extern "C" cudaError_t se_neurons_cuda_step_coop(const se_neurons_device *d,
                                                 const se_coop_device *cp, double t,
                                                 int update_gates, cudaStream_t stream) {
  if (cp->n_warps > 0)
    cp->lanes == 8   ? launch_coop<8>(d, cp, t, update_gates, stream)
    : cp->lanes == 2 ? launch_coop<2>(d, cp, t, update_gates, stream)
                     : launch_coop<4>(d, cp, t, update_gates, stream);
  return cudaGetLastError();
}

extern "C" cudaError_t se_neurons_cuda_coop_setup(size_t smem_bytes) {
  const cudaFuncAttribute a = cudaFuncAttributeMaxDynamicSharedMemorySize;
  cudaError_t rc = cudaFuncSetAttribute(step_coop<2>, a, (int)smem_bytes);
  if (rc == cudaSuccess)
    rc = cudaFuncSetAttribute(step_coop<4>, a, (int)smem_bytes);
  if (rc == cudaSuccess)
    rc = cudaFuncSetAttribute(step_coop<8>, a, (int)smem_bytes);
  return rc;
}
