/* Pieces shared by the sections of simengine-bench: the option parser. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
