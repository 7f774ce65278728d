/* Unit tests of the balancer (partition/balance.c, docs/balance.md): the paper's worked example,
 * Table 1 of paper 002 on virtual times, capacity caps, conservation and contiguity, the exact
 * optimum against brute force, and the cold-start convergence of both methods on a CPU+GPU split. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "balance.h"
#include "se_random.h"
#include "se_test.h"

#define N_ITEMS 10000
#define N_WORKERS 6

/* The five work distributions of Table 1 as costs per item in [1, 100] (our reading: the paper
 * names them but shows them only as pictograms): up rises linearly; up-down rises to the middle
 * and falls back; up-up rises twice (two ramps); random is uniform; stable is constant. */
static const char *const distributions[] = {"up-down", "up-up", "up", "random", "stable"};
static void make_costs(int kind, int64_t n, double *cost) {
  uint64_t state = 12345;
  for (int64_t i = 0; i < n; i++) {
    double x = (double)i / (double)(n - 1);
    switch (kind) {
    case 0: cost[i] = 1.0 + 99.0 * (1.0 - fabs(2.0 * x - 1.0)); break;
    case 1: cost[i] = 1.0 + 99.0 * fmod(2.0 * x, 1.0); break;
    case 2: cost[i] = 1.0 + 99.0 * x; break;
    case 3: cost[i] = 1.0 + 99.0 * se_rand_u01(&state); break;
    default: cost[i] = 1.0; break;
    }
  }
}

/* The four worker heterogeneities of Table 1 as time-per-unit factors (our reading): equal
 * workers; a mild spread; a node of five fast GPU workers and one CPU worker 10x slower, the
 * CPU first; factors spread over a factor 32. */
static const char *const heterogeneities[] = {"equal", "mild", "cpu+5gpu", "1..32"};
static const double factors[4][N_WORKERS] = {
    {1, 1, 1, 1, 1, 1}, {1, 1.2, 1.4, 1.6, 1.8, 2}, {10, 1, 1, 1, 1, 1}, {1, 2, 4, 8, 16, 32}};

/* Virtual time of every worker for the balancer's current configuration; returns the wall. */
static double virtual_times(const se_balance *b, const double *prefix, const double *factor,
                            double *times) {
  double wall = 0.0;
  for (int w = 0; w < b->workers; w++) {
    int64_t first, last;
    se_balance_interval(b, w, &first, &last);
    times[w] = factor[w] * (prefix[last + 1] - prefix[first]);
    wall = times[w] > wall ? times[w] : wall;
  }
  return wall;
}

/* Checks that the current configuration covers 0..n-1 with contiguous non-empty intervals in
 * worker order, conserves the total and respects the caps. */
static void check_configuration(se_test_state *st, const se_balance *b, const char *what) {
  int64_t next = 0, total = 0;
  int ok = 1;
  for (int w = 0; w < b->workers; w++) {
    int64_t first, last;
    se_balance_interval(b, w, &first, &last);
    ok &= first == next && last >= first;
    ok &= b->capacity[w] < 0 || b->counts[w] <= b->capacity[w];
    total += b->counts[w];
    next = last + 1;
  }
  SE_EXPECT(st, ok && next == b->items && total == b->items, "%s: bad configuration", what);
}

/* Runs the balancer for `iterations` updates on virtual times; returns the best wall and fills
 * hist[it] (when not NULL) with the wall of each iteration. */
static double run_virtual(se_test_state *st, se_balance_method method, int workers, int64_t n,
                          const double *cost, const double *factor, const int64_t *cap,
                          int iterations, double *hist, const char *what) {
  static double prefix[N_ITEMS + 1];
  double times[N_WORKERS];
  se_balance b;
  se_error err = {0};
  prefix[0] = 0.0;
  for (int64_t i = 0; i < n; i++)
    prefix[i + 1] = prefix[i] + cost[i];
  if (se_balance_init(&b, workers, n, cap, method, iterations, &err) != SE_OK) {
    SE_EXPECT(st, 0, "%s: init failed: %s", what, err.message);
    return INFINITY;
  }
  for (int it = 0; it < iterations; it++) {
    check_configuration(st, &b, what);
    double wall = virtual_times(&b, prefix, factor, times);
    if (hist)
      hist[it] = wall;
    SE_EXPECT(st, se_balance_update(&b, times, &err) == SE_OK, "%s: %s", what, err.message);
  }
  check_configuration(st, &b, what);
  SE_EXPECT(st, b.frozen && memcmp(b.counts, b.best_counts, sizeof(int64_t) * workers) == 0,
            "%s: no rollback to the best configuration", what);
  double best = virtual_times(&b, prefix, factor, times);
  SE_EXPECT(st, best == b.best_wall, "%s: rolled-back wall %g != best %g", what, best, b.best_wall);
  se_balance_free(&b);
  return best;
}

/* The worked example of Sec. 6.2 with t2 = 4 s (mean 7 s): remove 3, weight 2.25, give 7 and 6. */
static void test_worked_example(se_test_state *st) {
  int64_t s[2] = {10, 3};
  double t[2] = {10.0, 4.0}, move[2], target[2];
  se_balance_paper_moves(2, s, t, move);
  SE_EXPECT(st, fabs(move[0] + 3.0) < 1e-12 && fabs(move[1] - 2.25) < 1e-12,
            "moves %g %g, expected -3 2.25", move[0], move[1]);
  se_balance_targets(SE_BALANCE_PAPER, 2, s, t, NULL, target);
  SE_EXPECT(st, fabs(target[0] - 7.0) < 1e-12 && fabs(target[1] - 6.0) < 1e-12,
            "targets %g %g, expected 7 6", target[0], target[1]);
  se_balance b;
  se_error err = {0};
  SE_EXPECT(st, se_balance_init(&b, 2, 13, NULL, SE_BALANCE_PAPER, 40, &err) == SE_OK, "%s",
            err.message);
  SE_EXPECT(st, b.counts[0] == 7 && b.counts[1] == 6, "first iteration %lld %lld, expected 7 6",
            (long long)b.counts[0], (long long)b.counts[1]);
  b.counts[0] = 10, b.counts[1] = 3;
  SE_EXPECT(st, se_balance_update(&b, t, &err) == SE_OK, "%s", err.message);
  SE_EXPECT(st, b.counts[0] == 7 && b.counts[1] == 6, "update gave %lld %lld, expected 7 6",
            (long long)b.counts[0], (long long)b.counts[1]);
  /* Rate method: rates 1 and 0.75 items/s, 13 items -> 13/1.75 = 7.43 and 5.57 -> 7 and 6. */
  se_balance_targets(SE_BALANCE_RATE, 2, s, t, NULL, target);
  SE_EXPECT(st, fabs(target[0] - 13.0 / 1.75) < 1e-12, "rate target %g", target[0]);
  se_balance_free(&b);
}

/* Table 1: 6 workers, 10 000 items, 40 iterations, best within 0.2% of the optimum. */
static void test_table1(se_test_state *st, se_balance_method method) {
  static double cost[N_ITEMS];
  printf("Table 1 (%s): extra cost of the best of 40 iterations over the optimum\n",
         method == SE_BALANCE_PAPER ? "paper" : "rate");
  printf("%-8s %9s %9s %9s %9s\n", "", heterogeneities[0], heterogeneities[1],
         heterogeneities[2], heterogeneities[3]);
  for (int d = 0; d < 5; d++) {
    make_costs(d, N_ITEMS, cost);
    printf("%-8s", distributions[d]);
    for (int h = 0; h < 4; h++) {
      char what[64];
      snprintf(what, sizeof what, "%s/%s", distributions[d], heterogeneities[h]);
      double best = run_virtual(st, method, N_WORKERS, N_ITEMS, cost, factors[h], NULL, 40, NULL,
                                what);
      double optimal = 0.0;
      se_error err = {0};
      SE_EXPECT(st, se_balance_optimal(N_WORKERS, N_ITEMS, cost, factors[h], NULL, NULL, &optimal,
                                       &err) == SE_OK, "%s", err.message);
      double extra = (best - optimal) / optimal;
      printf(" %8.3f%%", 100.0 * extra);
      /* The paper's update drifts slowly on up-up with one slow CPU worker (two-cycle
       * oscillation, docs/balance.md): a looser guard there, 0.2% everywhere else. */
      double bound = method == SE_BALANCE_PAPER && d == 1 && h == 2 ? 0.08 : 0.002;
      SE_EXPECT(st, extra >= -1e-12 && extra <= bound, "%s: best %.10g optimum %.10g (+%.3f%%)",
                what, best, optimal, 100.0 * extra);
    }
    printf("\n");
  }
}

/* Caps: a slow CPU worker and two capped fast workers; the caps hold at every iteration (checked
 * in run_virtual), the best reaches the capped optimum, and impossible caps are refused. */
static void test_capacity(se_test_state *st) {
  static double cost[1000];
  make_costs(3, 1000, cost);
  const double factor[3] = {20, 1, 1};
  const int64_t cap[3] = {-1, 300, 250};
  for (int m = 0; m < 2; m++) {
    double best = run_virtual(st, (se_balance_method)m, 3, 1000, cost, factor, cap, 40, NULL,
                              "capacity");
    double optimal = 0.0;
    int64_t counts[3];
    se_error err = {0};
    SE_EXPECT(st, se_balance_optimal(3, 1000, cost, factor, cap, counts, &optimal, &err) == SE_OK,
              "%s", err.message);
    SE_EXPECT(st, counts[1] <= 300 && counts[2] <= 250 && counts[0] + counts[1] + counts[2] == 1000,
              "optimal counts %lld %lld %lld break the caps", (long long)counts[0],
              (long long)counts[1], (long long)counts[2]);
    SE_EXPECT(st, best <= optimal * 1.002, "capped best %g vs optimum %g", best, optimal);
  }
  se_balance b;
  se_error err = {0};
  SE_EXPECT(st, se_balance_init(&b, 3, 1000, cap, SE_BALANCE_PAPER, 5, &err) == SE_OK, "%s",
            err.message);
  SE_EXPECT(st, b.counts[0] == 450 && b.counts[1] == 300 && b.counts[2] == 250,
            "capped first iteration %lld %lld %lld, expected 450 300 250", (long long)b.counts[0],
            (long long)b.counts[1], (long long)b.counts[2]);
  se_balance_free(&b);
  const int64_t small[2] = {10, 20};
  SE_EXPECT(st, se_balance_init(&b, 2, 31, small, SE_BALANCE_PAPER, 5, &err) == SE_ERR_ARG &&
                    strstr(err.message, "capacities"), "impossible caps accepted: %s", err.message);
  SE_EXPECT(st, se_balance_init(&b, 4, 3, NULL, SE_BALANCE_PAPER, 5, &err) == SE_ERR_ARG,
            "fewer items than workers accepted");
  double bad[2] = {1.0, NAN};
  SE_EXPECT(st, se_balance_init(&b, 2, 10, NULL, SE_BALANCE_RATE, 5, &err) == SE_OK, "%s",
            err.message);
  SE_EXPECT(st, se_balance_update(&b, bad, &err) == SE_ERR_ARG, "NaN time accepted");
  double zero[2] = {0.0, 3.0};
  SE_EXPECT(st, se_balance_update(&b, zero, &err) == SE_OK, "%s", err.message);
  check_configuration(st, &b, "zero time");
  se_balance_free(&b);
}

/* se_balance_set_counts: accepted counts become the configuration (and the best one before any
 * update); counts below 1, above a cap or with the wrong total are refused and change nothing. */
static void test_set_counts(se_test_state *st) {
  se_balance b;
  se_error err = {0};
  const int64_t cap[3] = {-1, 300, 250};
  SE_EXPECT(st, se_balance_init(&b, 3, 1000, cap, SE_BALANCE_RATE, 5, &err) == SE_OK, "%s",
            err.message);
  const int64_t good[3] = {700, 200, 100};
  SE_EXPECT(st, se_balance_set_counts(&b, good, &err) == SE_OK, "%s", err.message);
  SE_EXPECT(st, b.counts[0] == 700 && b.best_counts[2] == 100, "counts %lld/%lld not taken",
            (long long)b.counts[0], (long long)b.best_counts[2]);
  check_configuration(st, &b, "set counts");
  const int64_t bad[4][3] = {{500, 400, 100}, {0, 500, 500}, {700, 200, 99}, {698, 1, 301}};
  for (int k = 0; k < 4; k++) {
    SE_EXPECT(st, se_balance_set_counts(&b, bad[k], &err) == SE_ERR_ARG,
              "bad counts %d accepted", k);
    SE_EXPECT(st, b.counts[0] == 700 && b.counts[1] == 200 && b.counts[2] == 100,
              "bad counts %d changed the configuration", k);
  }
  const double t[3] = {7.0, 1.0, 1.0};
  SE_EXPECT(st, se_balance_update(&b, t, &err) == SE_OK, "%s", err.message);
  SE_EXPECT(st, b.counts[0] < 700, "the update kept %lld items on the slow worker",
            (long long)b.counts[0]);
  SE_EXPECT(st, se_balance_set_counts(&b, good, &err) == SE_OK && b.counts[0] == 700 &&
                    b.best_wall == 7.0, "keeping a configuration after an update failed");
  se_balance_free(&b);
}

/* se_balance_move_pays_back: worker 0 at 0.01 s per item over 100 items (1 s), worker 1 at
 * 0.001 s per item over 100 (0.1 s); moving 50 items to worker 1 predicts max(0.5, 0.15) s, a
 * gain of 0.5 s per iteration, and rebuilds all 200 items. */
static void test_payback(se_test_state *st) {
  const int64_t cur[2] = {100, 100}, next[2] = {50, 150};
  const double t[2] = {1.0, 0.1};
  SE_EXPECT(st, se_balance_move_pays_back(2, cur, t, next, -1.0, 1) == 1,
            "an unmeasured move cost must allow the move");
  /* cost 200 x 0.01 = 2 s: pays back over 5 iterations (2.5 s), not over 3 (1.5 s) */
  SE_EXPECT(st, se_balance_move_pays_back(2, cur, t, next, 0.01, 5) == 1, "5 iterations");
  SE_EXPECT(st, se_balance_move_pays_back(2, cur, t, next, 0.01, 3) == 0, "3 iterations");
  /* nothing changes: no gain, nothing to pay for, no move */
  SE_EXPECT(st, se_balance_move_pays_back(2, cur, t, cur, 0.01, 100) == 0, "no change");
  /* a move that makes it worse never pays back */
  const int64_t worse[2] = {150, 50};
  SE_EXPECT(st, se_balance_move_pays_back(2, cur, t, worse, 0.0, 100) == 0, "worse split");
  /* three workers, only the last two change: cost counts their 120 items */
  const int64_t c3[3] = {10, 100, 20}, n3[3] = {10, 60, 60};
  const double t3[3] = {0.1, 1.0, 0.2}; /* predicted max(0.1, 0.6, 0.6): gain 0.4 */
  SE_EXPECT(st, se_balance_move_pays_back(3, c3, t3, n3, 0.01, 2) == 0 &&
                    se_balance_move_pays_back(3, c3, t3, n3, 0.01, 4) == 1,
            "three workers: 1.2 s of moves against 0.4 s per iteration");
  SE_EXPECT(st, se_balance_moved_items(3, c3, n3) == 120 && se_balance_moved_items(3, c3, c3) == 0,
            "moved items %lld", (long long)se_balance_moved_items(3, c3, n3));
  /* the update with the test: taken when the cost is unknown, declined when it is too high
   * (the measured configuration stays), nothing to move when the update keeps the counts */
  se_balance b;
  se_error err = {0};
  const double cost[3] = {-1.0, 1e9, 0.0};
  for (int k = 0; k < 3; k++) {
    SE_EXPECT(st, se_balance_init(&b, 2, 200, NULL, SE_BALANCE_PAPER, 10, &err) == SE_OK, "%s",
              err.message);
    int64_t moved = -1;
    int kept = -1;
    const double even[2] = {1.0, 1.0};
    SE_EXPECT(st, se_balance_update_paying(&b, k == 2 ? even : t, cost[k], 5, &moved, &kept,
                                           &err) == SE_OK,
              "%s", err.message);
    if (k == 0)
      SE_EXPECT(st, kept == 0 && moved > 0 && b.counts[0] < 100,
                "unknown cost: kept %d, moved %lld, counts %lld", kept, (long long)moved,
                (long long)b.counts[0]);
    if (k == 1)
      SE_EXPECT(st, kept == 1 && moved == 0 && b.counts[0] == 100 && b.counts[1] == 100,
                "too costly: kept %d, moved %lld, counts %lld", kept, (long long)moved,
                (long long)b.counts[0]);
    if (k == 2)
      SE_EXPECT(st, kept == 0 && moved == 0 && b.counts[0] == 100,
                "balanced already: kept %d, moved %lld, counts %lld", kept, (long long)moved,
                (long long)b.counts[0]);
    check_configuration(st, &b, "paying update");
    se_balance_free(&b);
  }
}

/* Rounding: random real targets (any sign) give counts in [1, cap] summing to the total. */
static void test_rounding(se_test_state *st) {
  uint64_t state = 7;
  int bad = 0;
  for (int trial = 0; trial < 2000; trial++) {
    int workers = 1 + (int)(6 * se_rand_u01(&state));
    int64_t cap[6], room = 0;
    double target[6];
    for (int w = 0; w < workers; w++) {
      cap[w] = se_rand_u01(&state) < 0.3 ? 1 + (int64_t)(50 * se_rand_u01(&state)) : -1;
      room += cap[w] < 0 ? 1000 : cap[w];
      target[w] = 200.0 * se_rand_u01(&state) - 50.0;
    }
    int64_t items = workers + (int64_t)((double)(room - workers) * se_rand_u01(&state));
    if (items > 500)
      items = 500 > workers ? 500 : workers;
    if (items > room)
      continue;
    int64_t counts[6], total = 0;
    se_balance_round(workers, items, target, trial % 2 ? target : NULL, cap, counts);
    for (int w = 0; w < workers; w++) {
      bad += counts[w] < 1 || (cap[w] >= 0 && counts[w] > cap[w]);
      total += counts[w];
    }
    bad += total != items;
  }
  SE_EXPECT(st, bad == 0, "%d rounding violations", bad);
}

/* The dynamic program against brute force over every split, on tiny random cases with caps. */
static void test_optimal_brute(se_test_state *st) {
  uint64_t state = 99;
  int bad = 0;
  for (int trial = 0; trial < 3000; trial++) {
    int workers = 1 + (int)(3 * se_rand_u01(&state));
    int64_t n = workers + (int64_t)(7 * se_rand_u01(&state)), cap[3];
    double cost[10], factor[3], prefix[11] = {0};
    for (int64_t i = 0; i < n; i++) {
      cost[i] = se_rand_u01(&state) < 0.2 ? 0.0 : floor(10.0 * se_rand_u01(&state));
      prefix[i + 1] = prefix[i] + cost[i];
    }
    for (int w = 0; w < workers; w++) {
      factor[w] = 0.5 + 4.0 * se_rand_u01(&state);
      cap[w] = se_rand_u01(&state) < 0.3 ? 1 + (int64_t)(n * se_rand_u01(&state)) : -1;
    }
    double brute = INFINITY;
    for (int64_t e1 = 0; e1 <= n; e1++)
      for (int64_t e2 = e1; e2 <= n; e2++) {
        int64_t lo[3] = {0, e1, e2}, hi[3] = {e1, e2, n};
        if (workers == 1)
          lo[0] = 0, hi[0] = n;
        if (workers == 2)
          hi[1] = n;
        if ((workers == 1 && (e1 || e2)) || (workers == 2 && e2 != e1))
          continue;
        double wall = 0.0;
        for (int w = 0; w < workers; w++) {
          if (cap[w] >= 0 && hi[w] - lo[w] > cap[w])
            wall = INFINITY;
          double t = factor[w] * (prefix[hi[w]] - prefix[lo[w]]);
          wall = t > wall ? t : wall;
        }
        brute = wall < brute ? wall : brute;
      }
    double dp = 0.0;
    int64_t counts[3];
    se_error err = {0};
    int rc = se_balance_optimal(workers, n, cost, factor, cap, counts, &dp, &err);
    if (!isfinite(brute)) {
      bad += rc != SE_ERR_ARG;
      continue;
    }
    double check = 0.0;
    int64_t start = 0;
    for (int w = 0; w < workers; w++) {
      double t = factor[w] * (prefix[start + counts[w]] - prefix[start]);
      check = t > check ? t : check;
      bad += cap[w] >= 0 && counts[w] > cap[w];
      start += counts[w];
    }
    bad += rc != SE_OK || dp != brute || check != dp || start != n;
  }
  SE_EXPECT(st, bad == 0, "%d dynamic-program mismatches against brute force", bad);
}

/* Iterations until the wall is within tol of the optimum (the iteration index, 0 = cold start). */
static int iterations_to(const double *hist, int count, double optimal, double tol) {
  for (int it = 0; it < count; it++)
    if (hist[it] <= optimal * (1.0 + tol))
      return it;
  return -1;
}

/* Cold start on CPU+GPU splits: CPU worker first, GPU workers 20-50x faster. Prints the numbers
 * of docs/balance.md and checks that the rate method gets within 0.2% in at most 8 iterations. */
static void test_cold_start(se_test_state *st) {
  static double cost[N_ITEMS];
  double hist[2][40];
  printf("cold start: iterations until the wall is within 1%% / 0.2%% of the optimum\n");
  printf("%-8s %-8s %5s %12s %12s\n", "costs", "workers", "ratio", "paper", "rate");
  for (int d = 2; d < 5; d++) {
    make_costs(d, N_ITEMS, cost);
    for (int gpus = 1; gpus <= 3; gpus += 2) {
      for (int r = 0; r < 3; r++) {
        const double ratio[3] = {20, 30, 50};
        double factor[4] = {ratio[r], 1, 1, 1};
        int workers = 1 + gpus;
        double optimal = 0.0;
        se_error err = {0};
        SE_EXPECT(st, se_balance_optimal(workers, N_ITEMS, cost, factor, NULL, NULL, &optimal,
                                         &err) == SE_OK, "%s", err.message);
        int need[2][2];
        for (int m = 0; m < 2; m++) {
          run_virtual(st, (se_balance_method)m, workers, N_ITEMS, cost, factor, NULL, 40, hist[m],
                      "cold start");
          need[m][0] = iterations_to(hist[m], 40, optimal, 0.01);
          need[m][1] = iterations_to(hist[m], 40, optimal, 0.002);
        }
        printf("%-8s cpu+%dgpu %5.0f %5d / %-4d %5d / %-4d\n", distributions[d], gpus, ratio[r],
               need[0][0], need[0][1], need[1][0], need[1][1]);
        SE_EXPECT(st, need[1][0] >= 0 && need[1][0] <= 8 && need[1][1] >= 0 && need[1][1] <= 8,
                  "rate method needs %d / %d iterations (at most 8 expected)", need[1][0],
                  need[1][1]);
      }
    }
  }
}

int main(void) {
  se_test_state st = {0};
  test_worked_example(&st);
  test_rounding(&st);
  test_optimal_brute(&st);
  test_capacity(&st);
  test_set_counts(&st);
  test_payback(&st);
  test_table1(&st, SE_BALANCE_PAPER);
  test_table1(&st, SE_BALANCE_RATE);
  test_cold_start(&st);
  return se_test_finish(&st, "test_balance");
}
