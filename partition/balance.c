#include "balance.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "se_error.h"

const char *se_balance_method_name(se_balance_method method) {
  return method == SE_BALANCE_RATE ? "rate" : "paper";
}

int se_balance_method_parse(const char *name, se_balance_method *method, se_error *err) {
  for (se_balance_method m = SE_BALANCE_PAPER; m <= SE_BALANCE_RATE; m++)
    if (strcmp(name, se_balance_method_name(m)) == 0) {
      *method = m;
      return SE_OK;
    }
  SE_FAIL(err, SE_ERR_ARG, "unknown balancing method '%s' (expected paper or rate)", name);
}

/* Upper bound of worker w: its cap, or every item when it has none. */
static int64_t upper_bound(const int64_t *capacity, int w, int64_t items) {
  return (capacity && capacity[w] >= 0) ? capacity[w] : items;
}

void se_balance_round(int workers, int64_t items, const double *target, const double *unit,
                      const int64_t *capacity, int64_t *counts) {
  /* Integer start: the floor of each target clamped to its bounds. */
  int64_t total = 0;
  for (int w = 0; w < workers; w++) {
    int64_t hi = upper_bound(capacity, w, items);
    double x = isfinite(target[w]) ? floor(target[w]) : 1.0;
    counts[w] = x < 1.0 ? 1 : (x > (double)hi ? hi : (int64_t)x);
    total += counts[w];
  }
  /* Fix the total one item at a time, within the bounds: add where the predicted time after
   * adding stays lowest ((gap - 1) * unit largest, gap = target - count), remove where the
   * predicted time is highest (gap * unit smallest). At most a few items per worker move here
   * when the targets already sum to the total within the bounds. */
  while (total != items) {
    int pick = -1;
    double best = 0.0;
    for (int w = 0; w < workers; w++) {
      double gap = (isfinite(target[w]) ? target[w] : 1.0) - (double)counts[w];
      double u = unit ? unit[w] : 1.0;
      double add = (gap - 1.0) * u, drop = gap * u;
      if (total < items && counts[w] < upper_bound(capacity, w, items) && (pick < 0 || add > best))
        pick = w, best = add;
      if (total > items && counts[w] > 1 && (pick < 0 || drop < best))
        pick = w, best = drop;
    }
    if (pick < 0)
      return; /* infeasible bounds: excluded by se_balance_init */
    counts[pick] += total < items ? 1 : -1;
    total += total < items ? 1 : -1;
  }
}

/* Clamps real targets into [1, cap] keeping their sum: clamped workers are fixed and the others
 * rescaled to the rest of the items, until none leaves its bounds (at most W rounds). */
static void clamp_targets(int workers, int64_t items, const int64_t *capacity, double *target) {
  for (int round = 0; round < workers; round++) {
    double fixed = 0.0, free_sum = 0.0;
    int clamped = 0;
    for (int w = 0; w < workers; w++) {
      double hi = (double)upper_bound(capacity, w, items);
      if (!(target[w] >= 1.0))
        target[w] = 1.0, clamped = 1;
      else if (target[w] > hi)
        target[w] = hi, clamped = 1;
    }
    if (!clamped)
      return;
    /* Workers at a bound stay there; the others share what is left in proportion. */
    for (int w = 0; w < workers; w++) {
      double hi = (double)upper_bound(capacity, w, items);
      if (target[w] <= 1.0 || target[w] >= hi)
        fixed += target[w];
      else
        free_sum += target[w];
    }
    if (free_sum <= 0.0)
      return;
    double scale = ((double)items - fixed) / free_sum;
    if (!(scale > 0.0))
      return;
    for (int w = 0; w < workers; w++) {
      double hi = (double)upper_bound(capacity, w, items);
      if (target[w] > 1.0 && target[w] < hi)
        target[w] *= scale;
    }
  }
}

/* Per-item cost c_i = t_i / s_i, with zero times floored at 1e-9 times the mean cost per item
 * (every time zero: every cost 1, so nothing moves). */
static double item_cost(int workers, const int64_t *s, const double *t, int w) {
  double t_sum = 0.0, s_sum = 0.0;
  for (int v = 0; v < workers; v++)
    t_sum += t[v], s_sum += (double)s[v];
  double floor_cost = t_sum > 0.0 ? 1e-9 * t_sum / s_sum : 1.0;
  double c = t[w] / (double)s[w];
  return c > floor_cost ? c : floor_cost;
}

void se_balance_paper_moves(int workers, const int64_t *s, const double *t, double *move) {
  double t_a = 0.0;
  for (int w = 0; w < workers; w++)
    t_a += t[w];
  t_a /= workers;
  for (int w = 0; w < workers; w++)
    move[w] = (t_a - t[w]) / item_cost(workers, s, t, w);
}

void se_balance_targets(se_balance_method method, int workers, const int64_t *s, const double *t,
                        const double *slope, double *target) {
  if (method == SE_BALANCE_RATE) {
    /* Each worker's time as a line through its measurement, t_i + m_i (x - s_i); the common time
     * T at which the lines' counts add up to the total, and each worker's count at T. */
    double num = 0.0, den = 0.0;
    for (int w = 0; w < workers; w++) {
      double m = slope ? slope[w] : item_cost(workers, s, t, w);
      num += t[w] / m;
      den += 1.0 / m;
    }
    double time = num / den;
    for (int w = 0; w < workers; w++) {
      double m = slope ? slope[w] : item_cost(workers, s, t, w);
      target[w] = (double)s[w] + (time - t[w]) / m;
    }
    return;
  }
  se_balance_paper_moves(workers, s, t, target);
  double removed = 0.0, given = 0.0;
  for (int w = 0; w < workers; w++) {
    if (target[w] < 0.0)
      removed -= target[w];
    else
      given += target[w];
  }
  double weight = given > 0.0 ? removed / given : 0.0;
  for (int w = 0; w < workers; w++)
    target[w] = (double)s[w] + (target[w] < 0.0 ? target[w] : target[w] * weight);
}

void se_balance_free(se_balance *b) {
  free(b->counts);
  free(b->capacity);
  free(b->best_counts);
  free(b->target);
  free(b->slope);
  free(b->unit);
  free(b->prev_counts);
  free(b->prev_times);
  free(b->measured);
  b->counts = b->capacity = b->best_counts = b->prev_counts = b->measured = NULL;
  b->target = b->slope = b->unit = b->prev_times = NULL;
}

/* Allocates the arrays of b for b->workers workers (zeroed). */
static int alloc_arrays(se_balance *b, se_error *err) {
  SE_CALLOC(err, b->counts, b->workers, "balancer counts");
  SE_CALLOC(err, b->capacity, b->workers, "balancer capacities");
  SE_CALLOC(err, b->best_counts, b->workers, "balancer best counts");
  SE_CALLOC(err, b->target, b->workers, "balancer targets");
  SE_CALLOC(err, b->slope, b->workers, "balancer slopes");
  SE_CALLOC(err, b->unit, b->workers, "balancer costs per item");
  SE_CALLOC(err, b->prev_counts, b->workers, "balancer previous counts");
  SE_CALLOC(err, b->prev_times, b->workers, "balancer previous times");
  SE_CALLOC(err, b->measured, b->workers, "balancer measured counts");
  return SE_OK;
}

int se_balance_init(se_balance *b, int workers, int64_t items, const int64_t *capacity,
                    se_balance_method method, int max_iterations, se_error *err) {
  memset(b, 0, sizeof *b);
  if (workers < 1)
    SE_FAIL(err, SE_ERR_ARG, "balancer needs at least one worker, got %d", workers);
  if (items < workers)
    SE_FAIL(err, SE_ERR_ARG, "balancer needs at least one item per worker: %lld items for %d workers",
            (long long)items, workers);
  if (max_iterations < 1)
    SE_FAIL(err, SE_ERR_ARG, "balancer iterations must be >= 1, got %d", max_iterations);
  int64_t room = 0;
  for (int w = 0; w < workers; w++) {
    if (capacity && capacity[w] != -1 && capacity[w] < 1)
      SE_FAIL(err, SE_ERR_ARG, "capacity of worker %d is %lld (expected -1 for none, or >= 1)", w,
              (long long)capacity[w]);
    int64_t hi = upper_bound(capacity, w, items);
    room = room > items - hi ? items : room + hi;
  }
  if (room < items)
    SE_FAIL(err, SE_ERR_ARG, "worker capacities hold %lld items in all, fewer than the %lld items",
            (long long)room, (long long)items);
  b->workers = workers;
  b->items = items;
  b->method = method;
  b->max_iterations = max_iterations;
  b->best_wall = INFINITY;
  int rc = SE_OK;
  SE_TRY_GOTO(rc, fail, alloc_arrays(b, err));
  for (int w = 0; w < workers; w++) {
    b->capacity[w] = capacity ? capacity[w] : -1;
    b->target[w] = (double)items / workers;
  }
  clamp_targets(workers, items, b->capacity, b->target);
  se_balance_round(workers, items, b->target, NULL, b->capacity, b->counts);
  memcpy(b->best_counts, b->counts, (size_t)workers * sizeof *b->counts);
  return SE_OK;
fail:
  se_balance_free(b);
  return rc;
}

void se_balance_interval(const se_balance *b, int w, int64_t *first, int64_t *last) {
  int64_t start = 0;
  for (int v = 0; v < w; v++)
    start += b->counts[v];
  *first = start;
  *last = start + b->counts[w] - 1;
}

int se_balance_set_counts(se_balance *b, const int64_t *counts, se_error *err) {
  int64_t total = 0;
  for (int w = 0; w < b->workers; w++) {
    if (counts[w] < 1 || (b->capacity[w] >= 0 && counts[w] > b->capacity[w]))
      SE_FAIL(err, SE_ERR_ARG, "balancer: worker %d cannot hold %lld items (at least 1%s)", w,
              (long long)counts[w], b->capacity[w] >= 0 ? ", at most its cap" : "");
    total += counts[w];
  }
  if (total != b->items)
    SE_FAIL(err, SE_ERR_ARG, "balancer: the counts add up to %lld items, not %lld",
            (long long)total, (long long)b->items);
  memcpy(b->counts, counts, (size_t)b->workers * sizeof *counts);
  if (b->iteration == 0)
    memcpy(b->best_counts, counts, (size_t)b->workers * sizeof *counts);
  return SE_OK;
}

int64_t se_balance_moved_items(int workers, const int64_t *cur, const int64_t *next) {
  int64_t moved = 0, first_cur = 0, first_next = 0;
  for (int w = 0; w < workers; w++) {
    if (first_cur != first_next || cur[w] != next[w])
      moved += next[w];
    first_cur += cur[w];
    first_next += next[w];
  }
  return moved;
}

int se_balance_move_pays_back(int workers, const int64_t *cur, const double *t,
                              const int64_t *next, double cost_per_item, int64_t iterations_left) {
  if (cost_per_item < 0.0)
    return 1;
  double wall = 0.0, predicted = 0.0;
  for (int w = 0; w < workers; w++) {
    wall = t[w] > wall ? t[w] : wall;
    const double tw = cur[w] > 0 ? t[w] / (double)cur[w] * (double)next[w] : 0.0;
    predicted = tw > predicted ? tw : predicted;
  }
  return (wall - predicted) * (double)iterations_left >
         cost_per_item * (double)se_balance_moved_items(workers, cur, next);
}

int se_balance_update_paying(se_balance *b, const double *times, double cost_per_item,
                             int64_t iterations_left, int64_t *moved, int *kept, se_error *err) {
  const int W = b->workers;
  memcpy(b->measured, b->counts, (size_t)W * sizeof *b->counts);
  SE_TRY(se_balance_update(b, times, err));
  *moved = se_balance_moved_items(W, b->measured, b->counts);
  *kept = 0;
  if (*moved > 0 &&
      !se_balance_move_pays_back(W, b->measured, times, b->counts, cost_per_item, iterations_left)) {
    SE_TRY(se_balance_set_counts(b, b->measured, err));
    *moved = 0;
    *kept = 1;
  }
  return SE_OK;
}

int se_balance_update(se_balance *b, const double *times, se_error *err) {
  double wall = 0.0;
  for (int w = 0; w < b->workers; w++) {
    if (!isfinite(times[w]) || times[w] < 0.0)
      SE_FAIL(err, SE_ERR_ARG, "balancer: time of worker %d is %g (expected finite and >= 0)", w,
              times[w]);
    wall = times[w] > wall ? times[w] : wall;
  }
  if (b->frozen)
    return SE_OK;
  if (wall < b->best_wall) {
    b->best_wall = wall;
    memcpy(b->best_counts, b->counts, (size_t)b->workers * sizeof *b->counts);
  }
  b->iteration++;
  if (b->iteration >= b->max_iterations) {
    memcpy(b->counts, b->best_counts, (size_t)b->workers * sizeof *b->counts);
    b->frozen = 1;
    return SE_OK;
  }
  double *slope = NULL;
  for (int w = 0; w < b->workers; w++)
    b->unit[w] = item_cost(b->workers, b->counts, times, w);
  if (b->method == SE_BALANCE_RATE) {
    /* Marginal time per item: the secant through the last two measurements when the count moved,
     * kept within [1/8, 8] times the worker's mean cost per item; the mean cost otherwise. */
    slope = b->slope;
    for (int w = 0; w < b->workers; w++) {
      const double c = b->unit[w];
      int64_t moved = b->counts[w] - b->prev_counts[w];
      double m = b->iteration > 1 && moved != 0 ? (times[w] - b->prev_times[w]) / (double)moved : c;
      slope[w] = !(m >= c / 8.0) ? c / 8.0 : (m > 8.0 * c ? 8.0 * c : m);
      b->prev_counts[w] = b->counts[w];
      b->prev_times[w] = times[w];
    }
  }
  se_balance_targets(b->method, b->workers, b->counts, times, slope, b->target);
  clamp_targets(b->workers, b->items, b->capacity, b->target);
  se_balance_round(b->workers, b->items, b->target, slope ? slope : b->unit, b->capacity,
                   b->counts);
  return SE_OK;
}

/* Allocates the work arrays of se_balance_optimal; the caller frees them. */
static int optimal_alloc(size_t n1, int workers, double **prefix, double **prev,
                                     double **next, int64_t **start, se_error *err) {
  SE_CALLOC(err, *prefix, n1, "optimal partition prefix sums");
  SE_CALLOC(err, *prev, n1, "optimal partition table");
  SE_CALLOC(err, *next, n1, "optimal partition table");
  SE_CALLOC(err, *start, n1 * (size_t)workers, "optimal partition choices");
  return SE_OK;
}

/* Largest wall of the first w+1 workers over items [0, j) when worker w starts at item i. */
static double split_wall(const double *prev, const double *prefix, double factor, int64_t i,
                         int64_t j) {
  double own = factor * (prefix[j] - prefix[i]);
  return prev[i] > own ? prev[i] : own;
}

int se_balance_optimal(int workers, int64_t items, const double *cost, const double *factor,
                       const int64_t *capacity, int64_t *counts, double *wall, se_error *err) {
  if (workers < 1 || items < workers)
    SE_FAIL(err, SE_ERR_ARG, "optimal partition needs 1 <= workers <= items, got %d workers and "
            "%lld items", workers, (long long)items);
  int rc = SE_OK;
  size_t n1 = (size_t)items + 1;
  double *prefix = NULL, *prev = NULL, *next = NULL;
  int64_t *start = NULL;
  SE_TRY_GOTO(rc, done, optimal_alloc(n1, workers, &prefix, &prev, &next, &start, err));
  prefix[0] = 0.0;
  for (int64_t i = 0; i < items; i++)
    prefix[i + 1] = prefix[i] + cost[i];
  /* prev[j]: best wall of the workers so far over items [0, j), INFINITY when they cannot hold
   * j items; non-decreasing in j (intervals may be empty here, costs are >= 0). */
  for (size_t j = 0; j < n1; j++)
    prev[j] = (int64_t)j <= upper_bound(capacity, 0, items) ? factor[0] * prefix[j] : INFINITY;
  for (int w = 1; w < workers; w++) {
    int64_t cap = upper_bound(capacity, w, items);
    for (int64_t j = 0; j <= items; j++) {
      /* Worker w takes [i, j): prev[i] grows with i, its own time shrinks; binary search for the
       * first i where prev[i] >= own time, the optimum is there or just before. */
      int64_t lo = j - cap > 0 ? j - cap : 0, hi = j;
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (prev[mid] >= factor[w] * (prefix[j] - prefix[mid]))
          hi = mid;
        else
          lo = mid + 1;
      }
      int64_t pick = lo;
      int64_t low_end = j - cap > 0 ? j - cap : 0;
      if (lo > low_end && split_wall(prev, prefix, factor[w], lo - 1, j) <=
                              split_wall(prev, prefix, factor[w], lo, j))
        pick = lo - 1;
      next[j] = split_wall(prev, prefix, factor[w], pick, j);
      start[(size_t)w * n1 + (size_t)j] = pick;
    }
    double *swap = prev;
    prev = next;
    next = swap;
  }
  if (!isfinite(prev[items]))
    SE_FAIL_GOTO(err, rc, done, SE_ERR_ARG, "worker capacities cannot hold the %lld items",
                 (long long)items);
  *wall = prev[items];
  if (counts) {
    int64_t end = items;
    for (int w = workers - 1; w >= 1; w--) {
      int64_t begin = start[(size_t)w * n1 + (size_t)end];
      counts[w] = end - begin;
      end = begin;
    }
    counts[0] = end;
  }
done:
  free(prefix);
  free(prev);
  free(next);
  free(start);
  return rc;
}
