/* simengine-bench gpu-hines: the mono-morphology GPU Hines kernels (cuda/hines_mono.h,
 * docs/gpu-hines.md) on populations of one synthetic class per row, next to the device copy
 * bandwidth measured in the same run. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#ifndef SIMENGINE_HAVE_CUDA
int se_bench_gpu_hines(int argc, char **argv) {
  (void)argc;
  (void)argv;
  printf("skipped: no CUDA in this build\n");
  return 77;
}
#else

#include "hines_coop.h"
#include "hines_mono.h"
#include "se_cuda.h"
#include "se_error.h"
#include "swc.h"

static const char *usage =
    "Usage: simengine-bench gpu-hines [options]\n"
    "\n"
    "Times the mono-morphology GPU Hines kernels (docs/gpu-hines.md) on populations of one\n"
    "synthetic class (paper 000, Table 1) per row: the solve alone, CUDA events, the median of\n"
    "the solves after one warm-up; d and rhs are put back by a device-to-device copy before\n"
    "every solve, outside the timed interval. Prints the time per solve, the effective bandwidth\n"
    "at the floor of 40 B per compartment (u, l, d, rhs read once, the solution written once),\n"
    "that bandwidth as a fraction of the device copy bandwidth measured at the start, and the\n"
    "kernel's own byte model (docs/gpu-hines.md) with the fraction of the copy it implies.\n"
    "Every row's solution is checked against the CPU reference on three systems.\n"
    "\n"
    "Options:\n"
    "  --classes LIST   comma list (default small-low,small-high,medium-low,medium-high,big-low,big-high)\n"
    "  --sizes LIST     neurons per population (default 256,2560,25600,256000)\n"
    "  --variants LIST  comma list of variants (default below)\n"
    "  --min-time S     time each variant for at least S seconds, at least 5 solves (default 0.2)\n"
    "  --copy-bytes N   buffer size of the copy-bandwidth measurement (default 2147483648)\n"
    "  --seed N         seed of the random systems (default 1)\n"
    "  --l2-fetch B     set the device's L2 fetch granularity (cudaLimitMaxL2FetchGranularity,\n"
    "                   0 to 128 bytes; default: the driver's)\n"
    "  --csv FILE       also write the rows as CSV\n"
    "\n"
    "A variant is LAYOUT[-KERNEL][-tT][-sST][-cC][-rR] or\n"
    "LAYOUT-coop[-lL][-sST][-wW][-cC][-reg|-noreg]:\n"
    "  LAYOUT  flat | full | blockBS (Block-Interleaved, BS 4, 8, 16, 32, 64 or 128; below 32\n"
    "          only the paper's kernel and COOP with 32 / BS lanes or fewer)\n"
    "  KERNEL  paper (default: the paper's Flat, Full-Interleaved or Block-Interleaved kernel\n"
    "          of the layout) | shared (Block-Shared) | stream | auto | coop (several lanes per\n"
    "          system, full and block layouts)\n"
    "  -tT -sST -cC -rR  STREAM settings: threads per CTA (32, 64, 128), pipeline stages (4, 8),\n"
    "          CTAs per multiprocessor, tail rows (0 = none; default: as many as fit)\n"
    "  -lL -sST -wW -cC  COOP settings: lanes per system (2, 4, 8, 16; default 4), pipeline\n"
    "          stages (2, 3, 4, 5, 6, 8; default: 6 or 5 where they keep 4 or more warps, else\n"
    "          4), warps per CTA (default: as many as fit), CTAs per\n"
    "          multiprocessor; -reg / -noreg: register rows on / off (8 lanes; default: on\n"
    "          where they fit more warps or stages on a block of one warp's systems, block4,\n"
    "          with one CTA per multiprocessor and at most 5 stages)\n"
    "Default variants: flat,full,block32,block128,block32-shared,full-stream-r0,\n"
    "                  block32-stream-r0,full-stream,block32-stream,full-coop,block32-coop\n";

static const char *default_variants = "flat,full,block32,block128,block32-shared,full-stream-r0,"
                                      "block32-stream-r0,full-stream,block32-stream,full-coop,"
                                      "block32-coop";

typedef struct variant {
  char label[48];
  se_hines_layout layout;
  int32_t bs;
  se_hines_kernel kernel;
  int has_cfg;
  se_hines_stream_config cfg;
  int coop; /* the COOP kernel (cuda/hines_coop.h) with ccfg */
  se_hines_coop_config ccfg;
} variant;

static int parse_variant(const char *spec, variant *v) {
  memset(v, 0, sizeof *v);
  if (strlen(spec) >= sizeof v->label)
    return -1;
  snprintf(v->label, sizeof v->label, "%s", spec);
  char buf[48], *save = NULL;
  snprintf(buf, sizeof buf, "%s", spec);
  char *tok = strtok_r(buf, "-", &save);
  if (!tok)
    return -1;
  if (!strcmp(tok, "flat")) {
    v->layout = SE_HINES_LAYOUT_FLAT;
    v->bs = 1;
  } else if (!strcmp(tok, "full")) {
    v->layout = SE_HINES_LAYOUT_FULL;
    v->bs = 1;
  } else if (!strncmp(tok, "block", 5)) {
    v->layout = SE_HINES_LAYOUT_BLOCK;
    v->bs = tok[5] ? atoi(tok + 5) : 32;
    if (!se_hines_block_size_ok(v->bs))
      return -1;
  } else {
    return -1;
  }
  v->kernel = v->layout == SE_HINES_LAYOUT_FLAT   ? SE_HINES_KERNEL_FLAT
              : v->layout == SE_HINES_LAYOUT_FULL ? SE_HINES_KERNEL_FULL
                                                  : SE_HINES_KERNEL_BLOCK;
  v->cfg = (se_hines_stream_config){0, 0, 0, -1};
  while ((tok = strtok_r(NULL, "-", &save))) {
    if (!strcmp(tok, "paper"))
      continue;
    if (!strcmp(tok, "shared")) {
      if (v->layout != SE_HINES_LAYOUT_BLOCK)
        return -1;
      v->kernel = SE_HINES_KERNEL_BLOCK_SHARED;
    } else if (!strcmp(tok, "stream")) {
      v->kernel = SE_HINES_KERNEL_STREAM;
    } else if (!strcmp(tok, "auto")) {
      v->kernel = SE_HINES_KERNEL_AUTO;
    } else if (!strcmp(tok, "coop")) {
      if (v->layout == SE_HINES_LAYOUT_FLAT)
        return -1;
      v->coop = 1;
    } else if (v->coop && (!strcmp(tok, "reg") || !strcmp(tok, "noreg"))) {
      v->ccfg.registers = tok[0] == 'r' ? SE_HINES_COOP_REG_ON : SE_HINES_COOP_REG_OFF;
    } else if (v->coop && strchr("lswc", tok[0]) && tok[1] >= '0' && tok[1] <= '9') {
      int val = atoi(tok + 1);
      if (tok[0] == 'l')
        v->ccfg.lanes = val;
      else if (tok[0] == 's')
        v->ccfg.stages = val;
      else if (tok[0] == 'w')
        v->ccfg.warps = val;
      else
        v->ccfg.ctas_per_sm = val;
    } else if (!v->coop && strchr("tscr", tok[0]) && tok[1] >= '0' && tok[1] <= '9') {
      int val = atoi(tok + 1);
      v->has_cfg = 1;
      if (tok[0] == 't')
        v->cfg.threads = val;
      else if (tok[0] == 's')
        v->cfg.stages = val;
      else if (tok[0] == 'c')
        v->cfg.ctas_per_sm = val;
      else
        v->cfg.tail_rows = val;
    } else {
      return -1;
    }
  }
  if (v->has_cfg && v->kernel != SE_HINES_KERNEL_STREAM && v->kernel != SE_HINES_KERNEL_AUTO)
    return -1;
  return 0;
}

/* The CPU reference of system s (Algorithm 1 on the generator's values): its solution. */
static void reference_system(int32_t n, const int32_t *parent, const int32_t *nchild,
                             uint64_t seed, int64_t s, double *x, double *work) {
  double *u = work, *l = work + n, *d = work + 2 * (size_t)n;
  for (int32_t i = 0; i < n; i++)
    se_hines_random_row(seed, s, i, nchild[i], &u[i], &l[i], &d[i], &x[i]);
  for (int32_t i = n - 1; i >= 1; i--) {
    double f = u[i] / d[i];
    d[parent[i]] -= f * l[i];
    x[parent[i]] -= f * x[i];
  }
  x[0] /= d[0];
  for (int32_t i = 1; i < n; i++) {
    x[i] -= l[i] * x[parent[i]];
    x[i] /= d[i];
  }
}

typedef struct result {
  int ok;            /* measured */
  char note[400];    /* why not, or the check's failure */
  se_hines_plan_info info;
  se_hines_coop_info cinfo; /* COOP variants */
  double ms, err;
  int reps;
} result;

/* A variant on its batch: what se_bench_time_solve restores and solves. */
typedef struct variant_run {
  se_hines_batch *b;
  const variant *v;
  const se_hines_coop *plan; /* COOP variants */
} variant_run;

static int restore_variant(void *ctx, se_error *err) {
  return se_hines_batch_restore(((const variant_run *)ctx)->b, err);
}

/* One solve of a variant (asynchronous). */
static int solve_variant(void *ctx, se_error *err) {
  const variant_run *run = ctx;
  if (run->v->coop)
    return se_hines_coop_solve(run->plan, run->b, err);
  return se_hines_batch_solve(run->b, run->v->kernel, run->v->has_cfg ? &run->v->cfg : NULL,
                              err);
}

/* Warm-up, check and timing of one variant on a filled and saved batch. */
static void run_variant(se_hines_batch *b, const variant *v, int32_t n, int64_t S,
                        const int32_t *parent, const int32_t *nchild, uint64_t seed,
                        double min_time, result *r) {
  se_error err = {0};
  memset(r, 0, sizeof *r);
  se_hines_coop *plan = NULL;
  int rc;
  if (v->coop) {
    rc = se_hines_coop_create(b, &v->ccfg, &plan, &err);
    if (rc == SE_OK) {
      se_hines_coop_get_info(plan, &r->cinfo);
      se_hines_coop_get_plan_info(plan, &r->info);
    }
  } else {
    rc = se_hines_batch_plan(b, v->kernel, v->has_cfg ? &v->cfg : NULL, &r->info, &err);
  }
  if (rc != SE_OK) {
    snprintf(r->note, sizeof r->note, "n/a: %.380s", err.message);
    return;
  }
  variant_run run = {b, v, plan};
  rc = restore_variant(&run, &err);
  if (rc == SE_OK)
    rc = solve_variant(&run, &err);
  if (rc == SE_OK)
    rc = se_hines_batch_sync(b, &err);
  /* check three systems against the CPU reference */
  if (rc == SE_OK) {
    double *x = malloc((size_t)n * sizeof *x), *ref = malloc((size_t)n * sizeof *ref);
    double *work = malloc(3 * (size_t)n * sizeof *work);
    const int64_t probe[3] = {0, S / 2, S - 1};
    for (int k = 0; k < 3 && rc == SE_OK; k++) {
      rc = se_hines_batch_download_system(b, 3, probe[k], x, &err);
      reference_system(n, parent, nchild, seed, probe[k], ref, work);
      double num = 0.0, den = 0.0;
      for (int32_t i = 0; i < n; i++) {
        num += (x[i] - ref[i]) * (x[i] - ref[i]);
        den += ref[i] * ref[i];
      }
      double e = sqrt(num / den);
      if (!(e <= r->err))
        r->err = e;
    }
    free(x);
    free(ref);
    free(work);
  }
  if (rc == SE_OK && !(r->err <= 1e-12))
    snprintf(r->note, sizeof r->note, "WRONG: relative error %.3g", r->err);
  /* timed solves (the checked solve was the warm-up) */
  double median_s = 0.0;
  if (rc == SE_OK)
    rc = se_bench_time_solve(se_hines_batch_stream(b), min_time, 0, 5, 2000, restore_variant,
                             solve_variant, &run, &median_s, &r->reps, &err);
  if (rc == SE_OK) {
    r->ms = 1e3 * median_s;
    r->ok = 1;
  } else {
    snprintf(r->note, sizeof r->note, "error: %.380s", err.message);
  }
  se_hines_coop_destroy(plan);
}

static void settings_str(const variant *v, const result *r, char *buf, size_t len) {
  const se_hines_plan_info *p = &r->info;
  const se_hines_coop_info *c = &r->cinfo;
  if (v->coop)
    snprintf(buf, len, "L%d S%d W%d C%d%s M%d T%d %.0f%%", c->cfg.lanes, c->cfg.stages,
             c->cfg.warps, c->cfg.ctas_per_sm, c->reg_steps ? " reg" : "", c->steps,
             c->trunk_rows, 100.0 * c->lane_use);
  else if (p->kernel == SE_HINES_KERNEL_COOP) /* an automatic row that chose COOP */
    snprintf(buf, len, "L%d C%d (automatic)", p->coop_lanes, p->coop_ctas_per_sm);
  else if (p->kernel == SE_HINES_KERNEL_STREAM)
    snprintf(buf, len, "T%d S%d C%d R%d K%d %s", p->stream.threads, p->stream.stages,
             p->stream.ctas_per_sm, p->tail_rows, p->slots, p->copy16 ? "c16" : "c8");
  else
    snprintf(buf, len, "%d thr/CTA", p->threads_per_cta);
}

int se_bench_gpu_hines(int argc, char **argv) {
  const char *classes = "small-low,small-high,medium-low,medium-high,big-low,big-high";
  const char *sizes = "256,2560,25600,256000";
  const char *variants = default_variants;
  const char *csv_path = NULL;
  double min_time = 0.2;
  long long copy_bytes_arg = (long long)2 << 30, seed_arg = 1, l2_fetch = -1;
  const se_bench_opt opts[] = {{"--classes", SE_BENCH_STRING, &classes},
                               {"--sizes", SE_BENCH_STRING, &sizes},
                               {"--variants", SE_BENCH_STRING, &variants},
                               {"--min-time", SE_BENCH_DOUBLE, &min_time},
                               {"--copy-bytes", SE_BENCH_INT, &copy_bytes_arg},
                               {"--seed", SE_BENCH_INT, &seed_arg},
                               {"--l2-fetch", SE_BENCH_INT, &l2_fetch},
                               {"--csv", SE_BENCH_STRING, &csv_path}};
  int parsed = se_bench_parse(argc, argv, "gpu-hines", usage, opts, sizeof opts / sizeof opts[0]);
  if (parsed >= 0)
    return parsed;
  if (copy_bytes_arg <= 0) {
    fprintf(stderr, "simengine-bench gpu-hines: --copy-bytes must be positive\n");
    return 2;
  }
  size_t copy_bytes = (size_t)copy_bytes_arg;
  uint64_t seed = (uint64_t)seed_arg;
  /* the variants */
  variant vars[64];
  int nv = 0;
  {
    char *list = strdup(variants), *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      if (nv == 64 || parse_variant(tok, &vars[nv]) != 0) {
        fprintf(stderr, "simengine-bench gpu-hines: bad variant '%s' (or more than 64)\n%s",
                tok, usage);
        free(list);
        return 2;
      }
      nv++;
    }
    free(list);
  }
  if (se_cuda_device_count() == 0) {
    printf("skipped: no GPU\n");
    return 77;
  }
  FILE *csv = NULL;
  if (csv_path && !(csv = fopen(csv_path, "w"))) {
    fprintf(stderr, "simengine-bench gpu-hines: cannot write '%s'\n", csv_path);
    return 1;
  }
  struct cudaDeviceProp prop;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
    fprintf(stderr, "simengine-bench gpu-hines: cannot read the device properties\n");
    return 1;
  }
  se_error err = {0};
  if (l2_fetch >= 0) {
    size_t got = 0;
    cudaError_t ce = cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, (size_t)l2_fetch);
    if (ce == cudaSuccess)
      ce = cudaDeviceGetLimit(&got, cudaLimitMaxL2FetchGranularity);
    if (ce != cudaSuccess) {
      fprintf(stderr, "simengine-bench gpu-hines: --l2-fetch %lld: %s\n", l2_fetch,
              cudaGetErrorString(ce));
      return 1;
    }
    printf("L2 fetch granularity: %zu B (asked %lld)\n", got, l2_fetch);
  }
  double copy = 0.0;
  if (se_cuda_copy_bandwidth(copy_bytes, &copy, &err) != SE_OK) {
    fprintf(stderr, "simengine-bench gpu-hines: %s\n", err.message);
    return 1;
  }
  copy /= 1e9;
  printf("GPU: %s, %d multiprocessors, L2 %.0f MiB, %zu B shared memory per multiprocessor\n",
         prop.name, prop.multiProcessorCount, prop.l2CacheSize / 1048576.0,
         prop.sharedMemPerMultiprocessor);
  printf("device copy bandwidth (cudaMemcpy device to device of %.2f GiB, read + write): "
         "%.1f GB/s\n\n",
         (double)copy_bytes / (1 << 30), copy);
  printf("%-11s %7s %10s %-24s %-12s %-26s | %9s %8s %6s | %6s %6s | %s\n", "class", "neurons",
         "compartm.", "variant", "kernel", "settings", "ms/solve", "GB/s@40B", "%copy",
         "B/comp", "%copy", "check");
  if (csv)
    fprintf(csv, "class,neurons,compartments,variant,kernel,threads,stages,ctas_per_sm,"
                 "tail_rows,slots,copy16,ms_per_solve,solves,gbps_at_40B,copy_gbps,fraction_of_copy,"
                 "model_bytes,model_fraction_of_copy,max_rel_error,lanes,steps,lane_use\n");
  int status = 0;
  result res[64];
  char *cls_list = strdup(classes), *save_c = NULL;
  for (char *cls = strtok_r(cls_list, ",", &save_c); cls; cls = strtok_r(NULL, ",", &save_c)) {
    se_morphology mo = {0};
    if (se_morphology_synthetic(cls, 1, &mo, &err) != SE_OK) {
      fprintf(stderr, "simengine-bench gpu-hines: %s\n", err.message);
      status = 2;
      break;
    }
    const int32_t n = mo.n_compartments;
    int32_t *nchild = calloc((size_t)n, sizeof *nchild);
    for (int32_t i = 1; i < n; i++)
      nchild[mo.parent[i]]++;
    char *size_list = strdup(sizes), *save_s = NULL;
    for (char *sz = strtok_r(size_list, ",", &save_s); sz; sz = strtok_r(NULL, ",", &save_s)) {
      const int64_t S = atoll(sz);
      if (S < 1) {
        fprintf(stderr, "simengine-bench gpu-hines: bad size '%s'\n", sz);
        status = 2;
        continue;
      }
      for (int k = 0; k < nv; k++)
        res[k] = (result){0};
      /* one batch per layout, shared by the variants of that layout */
      for (int k = 0; k < nv; k++) {
        int first = 1;
        for (int j = 0; j < k; j++)
          if (vars[j].layout == vars[k].layout && vars[j].bs == vars[k].bs)
            first = 0;
        if (!first)
          continue;
        size_t need = 6 * (size_t)se_hines_array_size(vars[k].layout, n, S, vars[k].bs) * 8;
        size_t free_b = 0, total_b = 0;
        cudaMemGetInfo(&free_b, &total_b);
        se_hines_batch *b = NULL;
        int rc = SE_OK;
        if (need + ((size_t)256 << 20) > free_b) {
          rc = SE_ERR_NOMEM;
          snprintf(err.message, sizeof err.message, "needs %.1f GB of device memory, %.1f free",
                   need / 1e9, free_b / 1e9);
        }
        if (rc == SE_OK)
          rc = se_hines_batch_create(mo.parent, n, S, vars[k].layout, vars[k].bs, &b, &err);
        if (rc == SE_OK)
          rc = se_hines_batch_fill_random(b, seed, &err);
        if (rc == SE_OK)
          rc = se_hines_batch_save(b, &err);
        if (rc == SE_OK)
          rc = se_hines_batch_sync(b, &err);
        for (int j = k; j < nv; j++) {
          if (vars[j].layout != vars[k].layout || vars[j].bs != vars[k].bs)
            continue;
          if (rc != SE_OK)
            snprintf(res[j].note, sizeof res[j].note, "n/a: %.380s", err.message);
          else
            run_variant(b, &vars[j], n, S, mo.parent, nchild, seed, min_time, &res[j]);
        }
        se_hines_batch_destroy(b);
      }
      const double comps = (double)n * (double)S;
      for (int k = 0; k < nv; k++) {
        const result *r = &res[k];
        if (!r->ok) {
          printf("%-11s %7lld %10.0f %-24s %s\n", cls, (long long)S, comps, vars[k].label,
                 r->note);
          if (strncmp(r->note, "n/a", 3))
            status = 1;
          continue;
        }
        char settings[64];
        settings_str(&vars[k], r, settings, sizeof settings);
        const char *kname = se_hines_kernel_name(r->info.kernel);
        const double gbps = 40.0 * comps / (r->ms * 1e-3) / 1e9;
        const double model = r->info.model_bytes * comps / (r->ms * 1e-3) / 1e9;
        const int wrong = r->note[0] != 0;
        if (wrong)
          status = 1;
        printf("%-11s %7lld %10.0f %-24s %-12s %-26s | %9.4f %8.1f %5.1f%% | %6.1f %5.1f%% | %s\n",
               cls, (long long)S, comps, vars[k].label, kname, settings, r->ms, gbps,
               100.0 * gbps / copy, r->info.model_bytes, 100.0 * model / copy,
               wrong ? r->note : "ok");
        if (csv)
          fprintf(csv,
                  "%s,%lld,%.0f,%s,%s,%d,%d,%d,%d,%d,%d,%.6f,%d,%.3f,%.3f,%.4f,%.2f,%.4f,%.3g,"
                  "%d,%d,%.3f\n",
                  cls, (long long)S, comps, vars[k].label, kname, r->info.threads_per_cta,
                  vars[k].coop ? r->cinfo.cfg.stages
                  : r->info.kernel == SE_HINES_KERNEL_STREAM ? r->info.stream.stages
                                                             : 0,
                  vars[k].coop ? r->cinfo.cfg.ctas_per_sm
                  : r->info.kernel == SE_HINES_KERNEL_STREAM ? r->info.stream.ctas_per_sm
                                                             : 0,
                  vars[k].coop ? r->cinfo.trunk_rows : r->info.tail_rows,
                  vars[k].coop ? r->cinfo.roots : r->info.slots, r->info.copy16, r->ms, r->reps,
                  gbps, copy, gbps / copy, r->info.model_bytes, model / copy, r->err,
                  r->info.kernel == SE_HINES_KERNEL_COOP ? r->info.coop_lanes : 1,
                  vars[k].coop ? r->cinfo.steps : (int)n,
                  vars[k].coop ? r->cinfo.lane_use : 1.0);
      }
      fflush(stdout);
      if (csv)
        fflush(csv);
    }
    free(size_list);
    free(nchild);
    se_morphology_free(&mo);
  }
  free(cls_list);
  if (csv)
    fclose(csv);
  return status;
}
#endif
