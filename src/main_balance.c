/* simengine-balance: evaluates the balancing heuristic alone on virtual times (docs/balance.md).
 * A worker's virtual time is its time-per-unit factor times the sum of the per-item costs of its
 * interval; the heuristic runs for --iterations updates and is compared with the exact optimum. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance.h"
#include "se_error.h"

static const char usage[] =
    "Usage: simengine-balance [options] COSTS FACTORS\n"
    "  COSTS    per-item costs, one number (>= 0) per line\n"
    "  FACTORS  per-worker time-per-unit factors, one number (> 0) per line, in worker order\n"
    "Options:\n"
    "  --iterations N    heuristic updates before the rollback to the best (default 40)\n"
    "  --method M        paper (the paper's greedy update, default) or rate (measured rates)\n"
    "  --capacity LIST   most items per worker, comma-separated, '-' for no cap (e.g. -,2000)\n"
    "  --help            this text\n"
    "Prints 'iter <i> wall <w>' per iteration, then 'best <wall> intervals <first> <last> ...'\n"
    "(0-based, inclusive, worker order) and 'optimal <wall>' from an exact dynamic program.\n";

/* Reads one number per line from path into a growing array (blank lines skipped); each value
 * must be >= 0, and > 0 when positive is set. Errors name the file and line. */
static int read_numbers(const char *path, int positive, double **values, int64_t *count,
                        se_error *err) {
  FILE *f = fopen(path, "r");
  if (!f)
    SE_FAIL(err, SE_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
  int rc = SE_OK;
  int64_t n = 0, room = 0;
  double *v = NULL;
  char line[512];
  for (long lineno = 1; fgets(line, sizeof line, f); lineno++) {
    char *p = line;
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p == '\n' || *p == '\r' || *p == '\0')
      continue;
    char *end = NULL;
    errno = 0;
    double x = strtod(p, &end);
    while (end && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
      end++;
    line[strcspn(line, "\r\n")] = '\0';
    if (end == p || *end != '\0' || errno == ERANGE || !isfinite(x))
      SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT, "%s:%ld: '%s' is not a finite number", path, lineno,
                   line);
    if (x < 0.0 || (positive && x == 0.0))
      SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT, "%s:%ld: %s must be %s, got '%s'", path, lineno,
                   positive ? "a factor" : "a cost", positive ? "> 0" : ">= 0", line);
    if (n == room) {
      room = room ? 2 * room : 1024;
      double *grown = realloc(v, (size_t)room * sizeof *v);
      if (!grown)
        SE_FAIL_GOTO(err, rc, done, SE_ERR_NOMEM, "out of memory reading '%s'", path);
      v = grown;
    }
    v[n++] = x;
  }
  if (ferror(f))
    SE_FAIL_GOTO(err, rc, done, SE_ERR_IO, "error reading '%s'", path);
  if (n == 0)
    SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT, "%s: no numbers in the file", path);
done:
  fclose(f);
  if (rc != SE_OK) {
    free(v);
    v = NULL;
    n = 0;
  }
  *values = v;
  *count = n;
  return rc;
}

/* Parses "c0,c1,..." (each an integer >= 1 or '-') into cap[workers]; SE_ERR_ARG otherwise. */
static int parse_capacity(const char *text, int workers, int64_t *cap, se_error *err) {
  const char *p = text;
  for (int w = 0; w < workers; w++) {
    if (*p == '-' && (p[1] == ',' || p[1] == '\0')) {
      cap[w] = -1;
      p++;
    } else {
      char *end = NULL;
      errno = 0;
      long long x = strtoll(p, &end, 10);
      if (end == p || (*end != ',' && *end != '\0') || errno == ERANGE || x < 1)
        SE_FAIL(err, SE_ERR_ARG, "--capacity '%s': entry %d is not an integer >= 1 or '-'", text,
                w);
      cap[w] = x;
      p = end;
    }
    if (w + 1 < workers && *p++ != ',')
      SE_FAIL(err, SE_ERR_ARG, "--capacity '%s': %d entries expected (one per worker)", text,
              workers);
  }
  if (*p != '\0')
    SE_FAIL(err, SE_ERR_ARG, "--capacity '%s': %d entries expected (one per worker)", text,
            workers);
  return SE_OK;
}

/* Runs the heuristic and prints its history, the best configuration and the optimum. */
static int evaluate(const double *cost, int64_t items, const double *factor, int workers,
                    const int64_t *cap, se_balance_method method, int iterations, se_error *err) {
  double *prefix = NULL, *times = NULL;
  se_balance b = {0};
  int rc = SE_OK;
  prefix = malloc((size_t)(items + 1) * sizeof *prefix);
  times = malloc((size_t)workers * sizeof *times);
  if (!prefix || !times)
    SE_FAIL_GOTO(err, rc, done, SE_ERR_NOMEM, "out of memory for %lld items", (long long)items);
  prefix[0] = 0.0;
  for (int64_t i = 0; i < items; i++)
    prefix[i + 1] = prefix[i] + cost[i];
  SE_TRY_GOTO(rc, done, se_balance_init(&b, workers, items, cap, method, iterations, err));
  for (int it = 0; it < iterations; it++) {
    double wall = 0.0;
    for (int w = 0; w < workers; w++) {
      int64_t first, last;
      se_balance_interval(&b, w, &first, &last);
      times[w] = factor[w] * (prefix[last + 1] - prefix[first]);
      wall = times[w] > wall ? times[w] : wall;
    }
    printf("iter %d wall %.10g\n", it, wall);
    SE_TRY_GOTO(rc, done, se_balance_update(&b, times, err));
  }
  printf("best %.10g intervals", b.best_wall);
  for (int w = 0, first = 0; w < workers; first += (int)b.best_counts[w], w++)
    printf(" %d %lld", first, (long long)(first + b.best_counts[w] - 1));
  double optimal = 0.0;
  SE_TRY_GOTO(rc, done, se_balance_optimal(workers, items, cost, factor, cap, NULL, &optimal, err));
  printf("\noptimal %.10g\n", optimal);
done:
  se_balance_free(&b);
  free(prefix);
  free(times);
  return rc;
}

int main(int argc, char **argv) {
  int iterations = 40;
  se_balance_method method = SE_BALANCE_PAPER;
  const char *capacity_text = NULL, *paths[2] = {NULL, NULL};
  int npaths = 0;
  se_error err = {0};
  for (int a = 1; a < argc; a++) {
    const char *arg = argv[a];
    if (strcmp(arg, "--help") == 0) {
      fputs(usage, stdout);
      return 0;
    }
    if (strcmp(arg, "--iterations") == 0 || strcmp(arg, "--method") == 0 ||
        strcmp(arg, "--capacity") == 0) {
      if (a + 1 >= argc) {
        fprintf(stderr, "simengine-balance: %s needs a value\n%s", arg, usage);
        return 2;
      }
      const char *value = argv[++a];
      if (strcmp(arg, "--iterations") == 0) {
        char *end = NULL;
        long x = strtol(value, &end, 10);
        if (end == value || *end != '\0' || x < 1 || x > 1000000) {
          fprintf(stderr, "simengine-balance: --iterations '%s' is not an integer in 1..1000000\n",
                  value);
          return 2;
        }
        iterations = (int)x;
      } else if (strcmp(arg, "--method") == 0) {
        if (se_balance_method_parse(value, &method, &err) != SE_OK) {
          fprintf(stderr, "simengine-balance: %s\n", err.message);
          return 2;
        }
      } else {
        capacity_text = value;
      }
    } else if (arg[0] == '-' && arg[1] != '\0') {
      fprintf(stderr, "simengine-balance: unknown option '%s'\n%s", arg, usage);
      return 2;
    } else if (npaths < 2) {
      paths[npaths++] = arg;
    } else {
      fprintf(stderr, "simengine-balance: unexpected argument '%s'\n%s", arg, usage);
      return 2;
    }
  }
  if (npaths != 2) {
    fprintf(stderr, "simengine-balance: needs a COSTS file and a FACTORS file\n%s", usage);
    return 2;
  }
  double *cost = NULL, *factor = NULL;
  int64_t items = 0, workers = 0, *cap = NULL;
  int rc = read_numbers(paths[0], 0, &cost, &items, &err);
  if (rc == SE_OK)
    rc = read_numbers(paths[1], 1, &factor, &workers, &err);
  if (rc == SE_OK && workers > items)
    rc = se_error_set(&err, SE_ERR_INPUT, __FILE__, __LINE__, __func__,
                      "%lld workers in '%s' but only %lld items in '%s'", (long long)workers,
                      paths[1], (long long)items, paths[0]);
  int exit_code = 1;
  if (rc == SE_OK && capacity_text) {
    cap = malloc((size_t)workers * sizeof *cap);
    if (!cap)
      rc = se_error_set(&err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__, "out of memory");
    else if ((rc = parse_capacity(capacity_text, (int)workers, cap, &err)) != SE_OK)
      exit_code = 2;
  }
  if (rc == SE_OK)
    rc = evaluate(cost, items, factor, (int)workers, cap, method, iterations, &err);
  if (rc != SE_OK)
    fprintf(stderr, "simengine-balance: %s\n", err.message);
  free(cost);
  free(factor);
  free(cap);
  return rc == SE_OK ? 0 : exit_code;
}
