/* Pieces shared by the sections of simengine-bench: the option parser, lists, clocks, medians and
 * the timing loop of one GPU solve. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

int se_bench_parse(int argc, char **argv, const char *section, const char *usage,
                   const se_bench_opt *opts, int n_opts) {
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      fputs(usage, stdout);
      return 0;
    }
    const se_bench_opt *o = NULL;
    for (int k = 0; k < n_opts && !o; k++)
      if (!strcmp(a, opts[k].name))
        o = &opts[k];
    if (!o) {
      fprintf(stderr, "simengine-bench %s: unknown option '%s' (--help lists them)\n", section, a);
      return 2;
    }
    if (o->kind == SE_BENCH_FLAG) {
      *(int *)o->target = 1;
      continue;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "simengine-bench %s: option %s needs a value\n", section, a);
      return 2;
    }
    const char *v = argv[++i];
    char *end = NULL;
    if (o->kind == SE_BENCH_STRING) {
      *(const char **)o->target = v;
    } else if (o->kind == SE_BENCH_INT) {
      long long x = strtoll(v, &end, 10);
      if (!*v || *end) {
        fprintf(stderr, "simengine-bench %s: %s '%s' is not an integer\n", section, a, v);
        return 2;
      }
      *(long long *)o->target = x;
    } else {
      double x = strtod(v, &end);
      if (!*v || *end) {
        fprintf(stderr, "simengine-bench %s: %s '%s' is not a number\n", section, a, v);
        return 2;
      }
      *(double *)o->target = x;
    }
  }
  return -1;
}

int se_bench_parse_list(const char *s, long long *out, int max) {
  int n = 0;
  char *copy = strdup(s), *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save))
    out[n++] = atoll(tok);
  free(copy);
  return n;
}

double se_bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* qsort order of doubles, ascending. */
static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

void se_bench_sort(double *v, int n) { qsort(v, (size_t)n, sizeof *v, cmp_double); }

double se_bench_median(double *v, int n) {
  se_bench_sort(v, n);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#ifdef SIMENGINE_HAVE_CUDA
int se_bench_time_solve(cudaStream_t stream, double min_time, int warmup, int min_reps,
                        int max_reps, se_bench_step_fn restore, se_bench_step_fn solve, void *ctx,
                        double *median_s, int *reps_out, se_error *err) {
  cudaEvent_t e0, e1;
  SE_CUDA_CHECK(err, cudaEventCreate(&e0));
  SE_CUDA_CHECK(err, cudaEventCreate(&e1));
  double *times = calloc((size_t)max_reps, sizeof *times);
  if (!times) {
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for %d timings", max_reps);
  }
  double total = 0.0;
  int reps = 0, rc = SE_OK;
  for (int it = 0; it < max_reps + warmup; it++) {
    if ((rc = restore(ctx, err)) != SE_OK)
      break;
    cudaEventRecord(e0, stream);
    if ((rc = solve(ctx, err)) != SE_OK)
      break;
    cudaEventRecord(e1, stream);
    const cudaError_t ce = cudaEventSynchronize(e1);
    if (ce != cudaSuccess) {
      rc = se_error_set(err, SE_ERR_CUDA, __FILE__, __LINE__, __func__, "solve failed: %s",
                        cudaGetErrorString(ce));
      break;
    }
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, e0, e1);
    if (it < warmup)
      continue; /* warm-up: buffers, graphs, caches */
    times[reps++] = 1e-3 * ms;
    total += 1e-3 * ms;
    if (reps >= min_reps && total >= min_time)
      break;
  }
  if (rc == SE_OK) {
    *median_s = se_bench_median(times, reps);
    *reps_out = reps;
  }
  free(times);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return rc;
}
#endif
