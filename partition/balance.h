/* Dynamic balancing of a rank's items over its workers (paper 002, Sec. 6.2; docs/balance.md).
 * Pure functions: no MPI, no clocks, no global state. Each worker owns a contiguous interval of
 * the items, in worker order; the intervals cover every item and each holds at least one item. */
#ifndef SE_BALANCE_H
#define SE_BALANCE_H

#include <stdint.h>

#include "simengine/error.h"

/* How the next configuration is computed from the measured times. */
typedef enum se_balance_method {
  SE_BALANCE_PAPER = 0, /* the paper's greedy update: mean time as target, weighted redistribution */
  SE_BALANCE_RATE = 1   /* measured rates directly: each worker's time as a line in its count
                         * (mean cost per item first, then the secant through its last two
                         * measurements), all lines solved for one common time */
} se_balance_method;

/* Balancer state: the current configuration, the best one seen and the rollback schedule. */
typedef struct se_balance {
  int workers;                /* W >= 1 */
  int64_t items;              /* n >= W */
  se_balance_method method;
  int max_iterations;         /* after this many updates, roll back to the best and stay there */
  int iteration;              /* updates recorded so far */
  int frozen;                 /* 1 once rolled back: later updates change nothing */
  int64_t *counts;            /* [W] items per worker in the current configuration */
  int64_t *capacity;          /* [W] most items a worker may hold, -1 for no cap */
  int64_t *best_counts;       /* [W] the configuration with the smallest wall time seen */
  double best_wall;           /* its wall time (max of the worker times); INFINITY before any */
  double *target;             /* [W] scratch: real-valued counts of the next configuration */
  double *slope;              /* [W] scratch (RATE): marginal time per item of each worker */
  double *unit;               /* [W] scratch: mean time per item of each worker (rounding) */
  int64_t *prev_counts;       /* [W] (RATE) counts of the previous measured iteration */
  int64_t *measured;          /* [W] scratch (se_balance_update_paying): the measured counts */
  double *prev_times;         /* [W] (RATE) times of the previous measured iteration */
} se_balance;

/* Parses a method name ("paper" or "rate") into *method; SE_ERR_ARG naming the text otherwise. */
int se_balance_method_parse(const char *name, se_balance_method *method, se_error *err);

/* The name of a method ("paper", "rate"), as se_balance_method_parse reads it. */
const char *se_balance_method_name(se_balance_method method);

/* Starts a balancer for `items` items over `workers` workers: the first configuration gives each
 * worker the same count (within one item), respecting the caps. capacity is NULL (no caps) or
 * [workers] entries, each -1 (no cap) or >= 1. max_iterations >= 1 is the number of updates
 * after which the balancer rolls back to the best configuration seen. Fails with SE_ERR_ARG when
 * workers < 1, items < workers, or the caps cannot hold every item. Free with se_balance_free. */
int se_balance_init(se_balance *b, int workers, int64_t items, const int64_t *capacity,
                    se_balance_method method, int max_iterations, se_error *err);

/* Releases the arrays of b (b itself belongs to the caller). Safe on a zeroed struct. */
void se_balance_free(se_balance *b);

/* The interval of worker w in the current configuration: items first..last (0-based, inclusive). */
void se_balance_interval(const se_balance *b, int w, int64_t *first, int64_t *last);

/* Replaces the current configuration by counts[W] (each >= 1 and within its cap, summing to the
 * items): for a caller that starts from its own split, or that keeps its configuration when a
 * move would not pay back. The best configuration and the rollback schedule are unchanged (before
 * the first update the best is counts). SE_ERR_ARG naming the offending count otherwise. */
int se_balance_set_counts(se_balance *b, const int64_t *counts, se_error *err);

/* Whether moving from counts cur[W] (measured in times t[W]) to counts next[W] pays back over
 * iterations_left iterations: the predicted gain per iteration (the wall time max t minus the
 * largest predicted time, each worker's time scaled to its next count at its measured cost per
 * item) times iterations_left must exceed the predicted cost of the move, cost_per_item times the
 * items of the workers whose interval changes (first item or count). cost_per_item < 0 (not
 * measured yet): 1, move. Pure. */
int se_balance_move_pays_back(int workers, const int64_t *cur, const double *t,
                              const int64_t *next, double cost_per_item, int64_t iterations_left);

/* Items that change worker from counts cur[W] to counts next[W]: the new counts of the workers
 * whose interval (first item or count) changes; what a move rebuilds. Pure. */
int64_t se_balance_moved_items(int workers, const int64_t *cur, const int64_t *next);

/* se_balance_update, then the payback test of the move it asks for: when moving from the
 * configuration just measured to the new one would not pay back over iterations_left iterations
 * at cost_per_item seconds per moved item (se_balance_move_pays_back; < 0: not measured yet,
 * move), the measured configuration is kept (se_balance_set_counts). *moved receives the items
 * the caller must move (se_balance_moved_items; 0 when nothing changes), *kept 1 when a move was
 * declined. Fails like se_balance_update. */
int se_balance_update_paying(se_balance *b, const double *times, double cost_per_item,
                             int64_t iterations_left, int64_t *moved, int *kept, se_error *err);

/* Records one iteration run with the current configuration, times[w] seconds per worker (finite,
 * >= 0), and moves to the next configuration: the best one seen is kept; after max_iterations
 * updates the current configuration becomes the best one and stays (rollback). Once frozen,
 * further calls only validate times. Fails with SE_ERR_ARG on a bad time. */
int se_balance_update(se_balance *b, const double *times, se_error *err);

/* The paper's per-worker moves for counts s[W] measured in times t[W]: with t_a the mean time and
 * c_i = t_i / s_i, move[i] = -(t_i - t_a) / c_i (items removed, <= 0) for a worker slower than the
 * mean, and o_i = (t_a - t_i) / c_i (items wanted, >= 0, before the redistribution weight) for a
 * faster one. A zero time is replaced by a per-item cost of 1e-9 times the mean cost per item. */
void se_balance_paper_moves(int workers, const int64_t *s, const double *t, double *move);

/* Real-valued next counts target[W] (summing to the current total) from counts s and times t by
 * method: PAPER subtracts the removals and adds each wanted amount scaled by
 * S_removed / S_given (slope unused); RATE models worker i's time as t_i + m_i (x - s_i), m_i =
 * slope[i] (> 0) or, with slope NULL, the mean cost t_i / s_i (then the counts are proportional
 * to the rates s_i / t_i), and returns each worker's x at the common time where they add up. */
void se_balance_targets(se_balance_method method, int workers, const int64_t *s, const double *t,
                        const double *slope, double *target);

/* Rounds real targets (any sign) to integer counts summing to items, each in [1, cap] (capacity
 * NULL or -1 entries: no cap): the floors clamped to the bounds, then one item at a time where
 * the predicted time stays lowest, with unit[w] the time per item of worker w (NULL: 1 for all,
 * that is largest remainder). Needs workers <= items <= the sum of the caps. */
void se_balance_round(int workers, int64_t items, const double *target, const double *unit,
                      const int64_t *capacity, int64_t *counts);

/* Exact optimum over contiguous intervals (dynamic programming, O(W n log n)): the smallest wall
 * time max_w factor[w] * sum(cost of w's interval) with intervals in worker order, each of at
 * most capacity[w] items (capacity NULL or -1: no cap); costs >= 0. Intervals may be empty here
 * (that keeps the table monotone), so the result is a lower bound for every configuration the
 * balancer can reach (it keeps at least one item per worker). Writes
 * the optimal counts into counts[W] (when not NULL) and the wall time into *wall. Fails with
 * SE_ERR_ARG when no such partition exists, SE_ERR_NOMEM on allocation failure. */
int se_balance_optimal(int workers, int64_t items, const double *cost, const double *factor,
                       const int64_t *capacity, int64_t *counts, double *wall, se_error *err);

#endif
