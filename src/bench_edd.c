/* simengine-bench edd: one huge neuron, Exact Domain Decomposition on the GPU against the
 * sequential Hines sweep (docs/edd.md). */
#include "bench_edd.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#ifndef SIMENGINE_HAVE_CUDA
int se_bench_edd(int argc, char **argv) {
  (void)argc;
  (void)argv;
  printf("simengine-bench edd: skipped: no CUDA in this build\n");
  return 0;
}
#else
#include <math.h>

#include "hines_branch.h"
#include "hines_edd.h"
#include "se_cuda.h"
#include "swc.h"
#include "se_random.h"

static const char *usage =
    "Usage: simengine-bench edd [options]\n"
    "\n"
    "One huge neuron: the morphology refined (SWC max_length) to about the given numbers of\n"
    "rows, one random diagonally dominant system of the engine's form (g > 0 to the parent,\n"
    "d = c + couplings, c in [0.1, 2)). Times one solve (median over repetitions, CUDA events,\n"
    "r restored untimed before each) of:\n"
    "  edd          Exact Domain Decomposition, fine decomposition and recursion (paper 004),\n"
    "               for each K, seq_rows and tail_rows asked for;\n"
    "  1-thread     the sequential Hines sweep on one GPU thread (the plan of depth 0);\n"
    "  branch-lvl   the branch-level solve of one cell (cuda/hines_branch.h, paper 001);\n"
    "  cpu-seq      the sequential Hines sweep on one CPU core;\n"
    "next to the device copy bandwidth measured first: GB/s at 40 B per row (d, g, r read, x\n"
    "written, the parent index) and at the plan's byte model (docs/edd.md), and the largest\n"
    "relative error against the CPU sweep.\n"
    "\n"
    "Options:\n"
    "  --morph FILE       SWC file (default data/morphologies/EC2-609291-4.CNG.swc)\n"
    "  --rows LIST        target rows (default 100000,1000000,4000000)\n"
    "  --k LIST           K of the fine decomposition (default 3)\n"
    "  --seq-rows LIST    recursion stops at this many rows (default: the plan's default)\n"
    "  --tail-rows LIST   levels of at most this many rows run in the one-CTA tail (default:\n"
    "                     the GPU default)\n"
    "  --no-graph         launch the kernels one by one instead of a CUDA graph\n"
    "  --single-max N     largest rows for the 1-thread GPU sweep (default 4000000)\n"
    "  --no-branch        skip the branch-level solve\n"
    "  --min-time S       time each variant for at least S seconds (default 0.2)\n"
    "  --csv FILE         also write the rows as CSV\n";

static FILE *csv;
static double copy_gbps;

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) {
    fprintf(stderr, "simengine-bench edd: out of memory (%zu x %zu bytes)\n", n, size);
    exit(1);
  }
  return p;
}


/* ---- the solvers under test -------------------------------------------------------------- */

typedef struct edd_ctx {
  cudaStream_t stream;
  size_t bytes;
  const double *d, *g, *r0;
  double *r;
  se_hines_edd *e;
} edd_ctx;

static int edd_restore(void *vctx, se_error *err) {
  edd_ctx *c = vctx;
  SE_CUDA_CHECK(err, cudaMemcpyAsync(c->r, c->r0, c->bytes, cudaMemcpyDeviceToDevice, c->stream));
  return SE_OK;
}

static int edd_solve(void *vctx, se_error *err) {
  edd_ctx *c = vctx;
  return se_hines_edd_solve(c->e, c->d, c->g, c->r, err);
}

typedef struct branch_ctx {
  cudaStream_t stream;
  size_t bytes;
  double *d0, *r0, *d, *r;
  se_hines_branch_plan *plan;
  se_hines_branch_mode mode;
} branch_ctx;

static int branch_restore(void *vctx, se_error *err) {
  branch_ctx *c = vctx;
  SE_CUDA_CHECK(err, cudaMemcpyAsync(c->d, c->d0, c->bytes, cudaMemcpyDeviceToDevice, c->stream));
  SE_CUDA_CHECK(err, cudaMemcpyAsync(c->r, c->r0, c->bytes, cudaMemcpyDeviceToDevice, c->stream));
  return SE_OK;
}

static int branch_solve(void *vctx, se_error *err) {
  branch_ctx *c = vctx;
  return se_hines_branch_solve(c->plan, c->d, c->r, &c->mode, err);
}

static double rel_err(int64_t n, const double *x, const double *ref) {
  double num = 0.0, den = 0.0;
  for (int64_t i = 0; i < n; i++) {
    num += (x[i] - ref[i]) * (x[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  const double e = den > 0 ? sqrt(num / den) : sqrt(num);
  return e == e ? e : INFINITY;
}

typedef struct row_out {
  int32_t n;
  const char *variant;
  char config[96];
  double t, t_single, t_cpu, model_bytes, err;
  int reps;
} row_out;

static void print_row(const row_out *o) {
  const double gbps = 40.0 * o->n / o->t / 1e9;
  const double model = o->model_bytes > 0 ? o->model_bytes / o->t / 1e9 : 0.0;
  char vs1[16] = "-", vsc[16] = "-";
  if (o->t_single > 0)
    snprintf(vs1, sizeof vs1, "%.0fx", o->t_single / o->t);
  if (o->t_cpu > 0)
    snprintf(vsc, sizeof vsc, "%.2fx", o->t_cpu / o->t);
  printf("%9d  %-10s %-34s %11.1f %8.3f %8.1f %5.1f%% %8.1f %9s %8s %9.1e\n", (int)o->n,
         o->variant, o->config, 1e6 * o->t, 1e9 * o->t / o->n, gbps, 100.0 * gbps / copy_gbps,
         model, vs1, vsc, o->err);
  fflush(stdout);
  if (csv)
    fprintf(csv, "%d,%s,\"%s\",%.3f,%.4f,%.2f,%.4f,%.2f,%.3f,%.4f,%.3e,%d\n", (int)o->n,
            o->variant, o->config, 1e6 * o->t, 1e9 * o->t / o->n, gbps, gbps / copy_gbps, model,
            o->t_single > 0 ? o->t_single / o->t : 0.0, o->t_cpu > 0 ? o->t_cpu / o->t : 0.0,
            o->err, o->reps);
}

typedef struct bench_opts {
  const char *morph, *rows, *ks, *seqs, *tails, *csv_path;
  long long single_max;
  int no_graph, no_branch;
  double min_time;
} bench_opts;

/* Loads the morphology refined to about `target` rows (max_length from the rows at 1 um). */
static int load_refined(const char *path, long long target, int32_t n1, se_morphology *m,
                        double *ml, se_error *err) {
  se_discretization disc = se_discretization_default();
  disc.max_length = (double)n1 / (double)target;
  *ml = disc.max_length;
  return se_swc_load(path, &disc, NULL, m, err);
}

static int bench_size(const bench_opts *o, long long target, int32_t n1, cudaStream_t stream) {
  se_error err = {0};
  se_morphology m;
  double ml = 0.0;
  if (load_refined(o->morph, target, n1, &m, &ml, &err) != SE_OK) {
    fprintf(stderr, "simengine-bench edd: %s\n", err.message);
    return 1;
  }
  const int32_t n = m.n_compartments;
  const int32_t *parent = m.parent;
  const size_t bytes = (size_t)n * sizeof(double);
  double *d = xcalloc((size_t)n, 8), *g = xcalloc((size_t)n, 8), *r = xcalloc((size_t)n, 8);
  double *ref = xcalloc((size_t)n, 8), *pv = xcalloc((size_t)n, 8), *x = xcalloc((size_t)n, 8);
  uint64_t s = 0xEDD0ull + (uint64_t)n;
  for (int32_t i = 0; i < n; i++) {
    g[i] = i ? 0.05 + 0.95 * se_rand_counter_u01(&s) : 0.0;
    d[i] = 0.1 + 1.9 * se_rand_counter_u01(&s);
    r[i] = 2.0 * se_rand_counter_u01(&s) - 1.0;
  }
  for (int32_t i = 1; i < n; i++) {
    d[i] += g[i];
    d[parent[i]] += g[i];
  }
  /* the CPU sweep: reference and timing (one core) */
  double t_cpu = 0.0;
  {
    double *tv = xcalloc(1000, sizeof(double)), total = 0.0;
    int reps = 0;
    while (reps < 1000 && (reps < 3 || total < o->min_time)) {
      memcpy(ref, r, bytes);
      const double t0 = se_bench_now();
      se_hines_sequential(n, parent, d, g, ref, pv);
      tv[reps] = se_bench_now() - t0;
      total += tv[reps++];
    }
    se_bench_sort(tv, reps);
    t_cpu = tv[reps / 2];
    free(tv);
  }
  printf("\n%s refined to max_length %.4g um: %d rows, %d branches\n", o->morph, ml, (int)n,
         (int)m.n_branches);
  double *dd = NULL, *dg = NULL, *dr0 = NULL, *dr = NULL;
  if (cudaMalloc((void **)&dd, bytes) != cudaSuccess ||
      cudaMalloc((void **)&dg, bytes) != cudaSuccess ||
      cudaMalloc((void **)&dr0, bytes) != cudaSuccess ||
      cudaMalloc((void **)&dr, bytes) != cudaSuccess ||
      cudaMemcpy(dd, d, bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaMemcpy(dg, g, bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaMemcpy(dr0, r, bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaDeviceSynchronize() != cudaSuccess) {
    fprintf(stderr, "simengine-bench edd: no device memory for %d rows\n", (int)n);
    return 1;
  }
  printf("%9s  %-10s %-34s %11s %8s %8s %6s %8s %9s %8s %9s\n", "rows", "variant", "config",
         "us/solve", "ns/row", "GB/s@40", "%copy", "GB/s mdl", "vs 1-thr", "vs cpu", "error");
  int rc = 0;
  edd_ctx c = {.stream = stream, .bytes = bytes, .d = dd, .g = dg, .r0 = dr0, .r = dr};
  /* the sequential sweep on one GPU thread */
  double t_single = 0.0;
  if (n <= o->single_max) {
    se_hines_edd_options po = se_hines_edd_options_default();
    po.max_depth = 0;
    se_hines_edd_plan *p = NULL;
    int reps = 0;
    if (se_hines_edd_plan_create(parent, n, &po, &p, &err) != SE_OK ||
        se_hines_edd_create(p, NULL, stream, &c.e, &err) != SE_OK ||
        se_bench_time_solve(stream, 0.0, 0, 2, 4000, edd_restore, edd_solve, &c, &t_single,
                            &reps, &err) != SE_OK) {
      fprintf(stderr, "simengine-bench edd: 1-thread: %s\n", err.message);
      rc = 1;
    } else {
      cudaMemcpy(x, dr, bytes, cudaMemcpyDeviceToHost);
      se_hines_edd_stats st;
      se_hines_edd_plan_stats(p, &st);
      row_out ro = {n, "1-thread", "plan depth 0, 1 GPU thread", t_single, 0.0, t_cpu,
                    st.bytes_per_solve, rel_err(n, x, ref), reps};
      print_row(&ro);
    }
    se_hines_edd_destroy(c.e);
    c.e = NULL;
    se_hines_edd_plan_destroy(p);
  }
  /* EDD variants */
  long long ks[16], seqs[16], tails[16];
  const int nk = se_bench_parse_list(o->ks, ks, 16);
  int nseq = 1, ntail = 1;
  seqs[0] = se_hines_edd_options_default().seq_rows;
  tails[0] = se_hines_edd_gpu_options_default().tail_rows;
  if (o->seqs)
    nseq = se_bench_parse_list(o->seqs, seqs, 16);
  if (o->tails)
    ntail = se_bench_parse_list(o->tails, tails, 16);
  for (int ik = 0; ik < nk && !rc; ik++)
    for (int is = 0; is < nseq && !rc; is++) {
      se_hines_edd_options po = se_hines_edd_options_default();
      po.k = (int)ks[ik];
      po.seq_rows = (int32_t)seqs[is];
      se_hines_edd_plan *p = NULL;
      const double t0 = se_bench_now();
      if (se_hines_edd_plan_create(parent, n, &po, &p, &err) != SE_OK) {
        fprintf(stderr, "simengine-bench edd: plan: %s\n", err.message);
        rc = 1;
        break;
      }
      const double plan_s = se_bench_now() - t0;
      se_hines_edd_stats st;
      se_hines_edd_plan_stats(p, &st);
      printf("  plan K=%d seq_rows=%d: %.1f ms on the host, %d levels, rows", po.k,
             (int)po.seq_rows, 1e3 * plan_s, st.levels);
      for (int l = 0; l <= st.levels && l <= 32; l++)
        printf(" %d", (int)st.rows[l]);
      printf(", %lld general junctions, model %.1f B/row\n", (long long)st.general_junctions,
             st.bytes_per_solve / n);
      for (int it = 0; it < ntail && !rc; it++) {
        se_hines_edd_gpu_options go = se_hines_edd_gpu_options_default();
        go.tail_rows = (int32_t)tails[it];
        go.use_graph = !o->no_graph;
        if (se_hines_edd_create(p, &go, stream, &c.e, &err) != SE_OK) {
          fprintf(stderr, "simengine-bench edd: %s\n", err.message);
          rc = 1;
          break;
        }
        double t = 0.0;
        int reps = 0;
        if (se_bench_time_solve(stream, o->min_time, 2, 5, 4000, edd_restore, edd_solve, &c, &t,
                                &reps, &err) != SE_OK) {
          fprintf(stderr, "simengine-bench edd: %s\n", err.message);
          rc = 1;
        } else {
          cudaMemcpy(x, dr, bytes, cudaMemcpyDeviceToHost);
          row_out ro = {n, "edd", "", t, t_single, t_cpu, st.bytes_per_solve, rel_err(n, x, ref),
                        reps};
          snprintf(ro.config, sizeof ro.config, "K=%d seq=%d tail=%d L=%d T=%d launch=%d",
                   po.k, (int)po.seq_rows, (int)go.tail_rows, st.levels,
                   se_hines_edd_tail_level(c.e), se_hines_edd_launches(c.e));
          print_row(&ro);
        }
        se_hines_edd_destroy(c.e);
        c.e = NULL;
      }
      se_hines_edd_plan_destroy(p);
    }
  /* the branch-level solve of one cell (paper 001) */
  if (!o->no_branch && !rc) {
    int64_t offsets[2] = {0, n};
    branch_ctx b = {.stream = stream, .mode = {.compute_padding = 0, .exact = 1, .use_graph = 1}};
    if (se_hines_branch_plan_create(1, offsets, parent, 1, stream, &b.plan, &err) != SE_OK ||
        se_hines_branch_set_coupling(b.plan, g, &err) != SE_OK) {
      fprintf(stderr, "simengine-bench edd: branch plan: %s\n", err.message);
    } else {
      se_hines_branch_stats bs;
      se_hines_branch_plan_stats(b.plan, &bs);
      const int64_t S = se_hines_branch_slots(b.plan);
      const int32_t *slot = se_hines_branch_slot_map(b.plan);
      double *hd = xcalloc((size_t)S, 8), *hr = xcalloc((size_t)S, 8);
      for (int64_t k = 0; k < S; k++)
        hd[k] = 1.0;
      for (int32_t i = 0; i < n; i++) {
        hd[slot[i]] = d[i];
        hr[slot[i]] = r[i];
      }
      b.bytes = (size_t)S * 8;
      double t = 0.0;
      int reps = 0;
      if (cudaMalloc((void **)&b.d0, b.bytes) == cudaSuccess &&
          cudaMalloc((void **)&b.r0, b.bytes) == cudaSuccess &&
          cudaMalloc((void **)&b.d, b.bytes) == cudaSuccess &&
          cudaMalloc((void **)&b.r, b.bytes) == cudaSuccess &&
          cudaMemcpy(b.d0, hd, b.bytes, cudaMemcpyHostToDevice) == cudaSuccess &&
          cudaMemcpy(b.r0, hr, b.bytes, cudaMemcpyHostToDevice) == cudaSuccess &&
          cudaDeviceSynchronize() == cudaSuccess &&
          se_bench_time_solve(stream, o->min_time, 1, 2, 4000, branch_restore, branch_solve, &b,
                              &t, &reps, &err) == SE_OK) {
        cudaMemcpy(hr, b.r, b.bytes, cudaMemcpyDeviceToHost);
        for (int32_t i = 0; i < n; i++)
          x[i] = hr[slot[i]];
        row_out ro = {n, "branch-lvl", "", t, t_single, t_cpu, 0.0, rel_err(n, x, ref), reps};
        snprintf(ro.config, sizeof ro.config, "%d levels, longest branch %d", (int)bs.levels,
                 (int)bs.max_branch_length);
        print_row(&ro);
      } else {
        fprintf(stderr, "simengine-bench edd: branch-level: %s\n", err.message);
      }
      cudaFree(b.d0);
      cudaFree(b.r0);
      cudaFree(b.d);
      cudaFree(b.r);
      free(hd);
      free(hr);
      se_hines_branch_plan_destroy(b.plan);
    }
  }
  {
    row_out ro = {n, "cpu-seq", "sequential sweep, 1 core", t_cpu, t_single, t_cpu, 0.0, 0.0, 0};
    print_row(&ro);
  }
  cudaFree(dd);
  cudaFree(dg);
  cudaFree(dr0);
  cudaFree(dr);
  free(d);
  free(g);
  free(r);
  free(ref);
  free(pv);
  free(x);
  se_morphology_free(&m);
  return rc;
}

int se_bench_edd(int argc, char **argv) {
  bench_opts o = {.morph = "data/morphologies/EC2-609291-4.CNG.swc",
                  .rows = "100000,1000000,4000000",
                  .ks = "3",
                  .single_max = 4000000,
                  .min_time = 0.2};
  const se_bench_opt opts[] = {{"--morph", SE_BENCH_STRING, &o.morph},
                               {"--rows", SE_BENCH_STRING, &o.rows},
                               {"--k", SE_BENCH_STRING, &o.ks},
                               {"--seq-rows", SE_BENCH_STRING, &o.seqs},
                               {"--tail-rows", SE_BENCH_STRING, &o.tails},
                               {"--no-graph", SE_BENCH_FLAG, &o.no_graph},
                               {"--single-max", SE_BENCH_INT, &o.single_max},
                               {"--no-branch", SE_BENCH_FLAG, &o.no_branch},
                               {"--min-time", SE_BENCH_DOUBLE, &o.min_time},
                               {"--csv", SE_BENCH_STRING, &o.csv_path}};
  const int parsed = se_bench_parse(argc, argv, "edd", usage, opts, sizeof opts / sizeof opts[0]);
  if (parsed >= 0)
    return parsed;
  if (se_cuda_device_count() < 1) {
    printf("simengine-bench edd: skipped: no GPU\n");
    return 0;
  }
  se_error err = {0};
  double bw = 0.0;
  if (se_gpu_copy_bandwidth(0, (size_t)1 << 30, &bw, &err) != SE_OK) {
    fprintf(stderr, "simengine-bench edd: %s\n", err.message);
    return 1;
  }
  copy_gbps = bw / 1e9;
  printf("device copy bandwidth (device to device, 1 GiB, read + write): %.1f GB/s\n", copy_gbps);
  se_morphology m1;
  se_discretization disc = se_discretization_default();
  disc.max_length = 1.0;
  if (se_swc_load(o.morph, &disc, NULL, &m1, &err) != SE_OK) {
    fprintf(stderr, "simengine-bench edd: %s\n", err.message);
    return 1;
  }
  const int32_t n1 = m1.n_compartments;
  se_morphology_free(&m1);
  if (o.csv_path) {
    csv = fopen(o.csv_path, "w");
    if (!csv) {
      fprintf(stderr, "simengine-bench edd: cannot write '%s'\n", o.csv_path);
      return 1;
    }
    fprintf(csv, "rows,variant,config,us_per_solve,ns_per_row,gbps_at_40B,fraction_of_copy,"
                 "gbps_model,speedup_vs_1thread,speedup_vs_cpu,rel_error,reps\n");
  }
  cudaStream_t stream;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    fprintf(stderr, "simengine-bench edd: cudaStreamCreate failed\n");
    return 1;
  }
  long long rows[16];
  const int nr = se_bench_parse_list(o.rows, rows, 16);
  int rc = 0;
  for (int i = 0; i < nr && !rc; i++)
    rc = bench_size(&o, rows[i], n1, stream);
  cudaStreamDestroy(stream);
  if (csv)
    fclose(csv);
  return rc;
}
#endif
