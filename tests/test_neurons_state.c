/* Moving cells between engines (se_neurons_export_state / se_neurons_import_state, used by the
 * balanced workers of simengine, docs/balance.md): a run that is split after some steps into
 * engines of other layouts and cell ranges, which continue from the exported state, must equal
 * the uninterrupted run. On the CPU bit for bit (voltages of every compartment and spike times);
 * with "gpu" as argument one of the continuing engines is a CUDA engine (each GPU kernel), then
 * the state goes back to the CPU, and the tolerance is the GPU path's 1e-6 mV / 1e-6 ms
 * (docs/gpu.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "se_test.h"
#include "test_models.h"
#include "swc.h"
#include "simengine/neurons.h"

/* small-high and medium-low cells, mixed so that the groups of a slice do not follow cell order,
 * prep defaults (hh in soma and axon), clamps on every third cell so that most of them fire. */
static void build_model(se_neuron_model *m, int64_t copies) {
  se_error err = {0};
  se_morphology morph[2] = {{0}};
  se_neuron_model_init(m);
  se_test_ok(se_morphology_synthetic("small-high", 3, &morph[0], &err), &err, "small-high");
  se_test_ok(se_morphology_synthetic("medium-low", 5, &morph[1], &err), &err, "medium-low");
  se_test_ok(se_neuron_model_set_cells(m, 2, morph, (int64_t[]){copies, copies}, &err), &err,
             "se_neuron_model_set_cells");
  for (int64_t c = 0; c < m->n_cells; c++)
    m->cell_morphology[c] = (int32_t)((c * 7 / 3) % 2);
  int32_t regions = 0;
  for (int64_t k = 0; k < se_neuron_model_compartments(m); k++)
    regions = m->region[k] + 1 > regions ? m->region[k] + 1 : regions;
  se_test_ok(se_biophysics_alloc(&m->bio, regions, &err), &err, "se_biophysics_alloc");
  se_biophysics_set_prep_defaults(&m->bio);
  m->dt = 0.025;
  m->tstop = 30.0;
  const int64_t n = (m->n_cells + 2) / 3;
  for (int64_t k = 0; k < n; k++)
    se_test_model_add_iclamp(m, 3 * k, 0, 1.0 + 0.1 * (double)k, 20.0,
                             0.6 + 0.05 * (double)(k % 5));
  se_morphology_free(&morph[0]);
  se_morphology_free(&morph[1]);
}

/* Spikes (time, global cell) gathered over several engines. */
typedef struct spikes {
  int64_t n;
  double time[65536];
  int64_t cell[65536];
} spikes;

static void take(se_neurons_t e, spikes *s) {
  se_error err = {0};
  int64_t n;
  const double *t;
  const int64_t *c;
  if (se_neurons_take_spikes(e, &n, &t, &c, &err) != SE_OK || s->n + n > 65536) {
    fprintf(stderr, "take spikes: %s\n", err.message);
    exit(1);
  }
  for (int64_t k = 0; k < n; k++, s->n++) {
    s->time[s->n] = t[k];
    s->cell[s->n] = c[k];
  }
}

static void run(se_neurons_t e, int64_t steps, spikes *s) {
  se_error err = {0};
  for (int64_t k = 0; k < steps; k++)
    if (se_neurons_step(e, &err) != SE_OK) {
      fprintf(stderr, "step: %s\n", err.message);
      exit(1);
    }
  take(e, s);
}

static int by_cell_time(const void *a, const void *b) {
  const double *x = a, *y = b; /* (cell, time) pairs as doubles */
  return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* Largest difference of spike times after sorting by (cell, time); INFINITY when the cells or
 * counts differ. */
static double spike_difference(const spikes *a, const spikes *b) {
  if (a->n != b->n)
    return INFINITY;
  double *x = se_test_calloc((size_t)(2 * a->n + 1), sizeof *x);
  double *y = se_test_calloc((size_t)(2 * a->n + 1), sizeof *y);
  for (int64_t k = 0; k < a->n; k++) {
    x[2 * k] = (double)a->cell[k], x[2 * k + 1] = a->time[k];
    y[2 * k] = (double)b->cell[k], y[2 * k + 1] = b->time[k];
  }
  qsort(x, (size_t)a->n, 2 * sizeof *x, by_cell_time);
  qsort(y, (size_t)b->n, 2 * sizeof *y, by_cell_time);
  double worst = 0.0;
  for (int64_t k = 0; k < a->n; k++) {
    if (x[2 * k] != y[2 * k])
      worst = INFINITY;
    double d = fabs(x[2 * k + 1] - y[2 * k + 1]);
    worst = d > worst ? d : worst;
  }
  free(x);
  free(y);
  return worst;
}

/* Largest voltage difference between engine e (cells from global first) and the reference. */
static double voltage_difference(se_neurons_t ref, se_neurons_t e, int64_t first,
                                 const se_neuron_model *m) {
  se_error err = {0};
  se_test_ok(se_neurons_sync(ref, &err), &err, "se_neurons_sync (reference)");
  se_test_ok(se_neurons_sync(e, &err), &err, "se_neurons_sync");
  double worst = 0.0;
  for (int64_t c = 0; c < se_neurons_cell_count(e); c++) {
    int32_t mo = m->cell_morphology[first + c];
    int32_t n = (int32_t)(m->morph_offsets[mo + 1] - m->morph_offsets[mo]);
    for (int32_t i = 0; i < n; i++) {
      double d = fabs(se_neurons_voltage(ref, first + c, i) - se_neurons_voltage(e, c, i));
      worst = d > worst || isnan(d) ? d : worst;
    }
  }
  return worst;
}

/* Creates an engine over [b, e) and imports its cells' part of state (the export of all cells). */
static se_neurons_t continue_from(const se_neuron_model *m, int64_t b, int64_t e,
                                  const se_neurons_options *opt, int64_t steps, const double *state,
                                  const int64_t *offset) {
  se_error err = {0};
  se_neurons_t x = NULL;
  if (se_neurons_create(m, b, e, opt, &x, &err) != SE_OK ||
      se_neurons_import_state(x, steps, state + offset[b], &err) != SE_OK) {
    fprintf(stderr, "continue_from: %s\n", err.message);
    exit(1);
  }
  return x;
}

static spikes ref_spikes, split_spikes;

/* Splits the run after `first` steps into [0, cut) with opt_a and [cut, n) with opt_b, runs
 * `second` more steps and compares with the reference engine (run `first + second` steps). */
static void check_split(se_test_state *st, const se_neuron_model *m, se_neurons_t ref,
                        int64_t first, int64_t second, int64_t cut, const se_neurons_options *opt_a,
                        const se_neurons_options *opt_b, double tol, const char *what) {
  se_error err = {0};
  const int64_t n = m->n_cells;
  se_neurons_options cpu = se_neurons_default_options();
  se_neurons_t whole = NULL;
  se_test_ok(se_neurons_create(m, 0, n, &cpu, &whole, &err), &err, "se_neurons_create");
  split_spikes.n = 0;
  run(whole, first, &split_spikes);
  int64_t *offset = se_test_calloc((size_t)n + 1, sizeof *offset);
  double *state = se_test_calloc((size_t)se_neurons_state_size(whole, 0, n), sizeof *state);
  for (int64_t c = 0; c < n; c++)
    offset[c + 1] = offset[c] + se_neurons_state_size(whole, c, 1);
  SE_EXPECT(st, offset[n] == se_neurons_state_size(whole, 0, n), "state sizes add up");
  SE_EXPECT(st, offset[n] == 4 * se_neurons_compartment_count(whole), "4 doubles per compartment");
  SE_EXPECT(st, se_neurons_export_state(whole, 0, n, state, &err) == SE_OK, "%s", err.message);
  /* a partial export is the matching part of the whole one */
  double *part = se_test_calloc((size_t)(offset[cut + 3] - offset[cut]), sizeof *part);
  SE_EXPECT(st, se_neurons_export_state(whole, cut, 3, part, &err) == SE_OK, "%s", err.message);
  SE_EXPECT(st, !memcmp(part, state + offset[cut], (size_t)(offset[cut + 3] - offset[cut]) * sizeof *part),
            "%s: export of cells %lld..%lld differs from the whole export", what,
            (long long)cut, (long long)cut + 2);
  free(part);
  se_neurons_t a = continue_from(m, 0, cut, opt_a, first, state, offset);
  se_neurons_t b = continue_from(m, cut, n, opt_b, first, state, offset);
  SE_EXPECT(st, se_neurons_steps_taken(b) == first && se_neurons_time(b) == se_neurons_time(whole),
            "%s: imported time %g, expected %g", what, se_neurons_time(b), se_neurons_time(whole));
  run(a, second, &split_spikes);
  run(b, second, &split_spikes);
  double dv = voltage_difference(ref, a, 0, m), dv_b = voltage_difference(ref, b, cut, m);
  dv = dv_b > dv || isnan(dv_b) ? dv_b : dv;
  double dt = spike_difference(&ref_spikes, &split_spikes);
  SE_EXPECT(st, dv <= tol, "%s: voltages differ by %g mV (limit %g)", what, dv, tol);
  SE_EXPECT(st, dt <= tol, "%s: spikes differ by %g ms (limit %g; %lld vs %lld spikes)", what, dt,
            tol, (long long)ref_spikes.n, (long long)split_spikes.n);
  printf("%s: %lld spikes, voltages within %g mV, spike times within %g ms\n", what,
         (long long)split_spikes.n, dv, dt);
  se_neurons_destroy(a);
  se_neurons_destroy(b);
  se_neurons_destroy(whole);
  free(state);
  free(offset);
}

int main(int argc, char **argv) {
  se_test_state st = {0};
  const int gpu = argc > 1 && !strcmp(argv[1], "gpu");
  if (gpu && se_gpu_count() == 0) {
    printf("skipped: no GPU\n");
    return 77;
  }
  se_neuron_model m;
  build_model(&m, 20);
  se_error err = {0};
  const int64_t first = 400, second = 800, n = m.n_cells;
  se_neurons_options cpu = se_neurons_default_options(), flat = cpu, narrow = cpu;
  flat.layout = SE_LAYOUT_FLAT;
  narrow.interleave_width = 4;
  se_neurons_t ref = NULL;
  se_test_ok(se_neurons_create(&m, 0, n, &cpu, &ref, &err), &err, "se_neurons_create (reference)");
  run(ref, first + second, &ref_spikes);
  SE_EXPECT(&st, ref_spikes.n >= 10, "only %lld spikes: the test needs firing cells",
            (long long)ref_spikes.n);

  if (!gpu) {
    check_split(&st, &m, ref, first, second, 13, &flat, &narrow, 0.0, "cpu flat + width 4");
    check_split(&st, &m, ref, first, second, 1, &cpu, &cpu, 0.0, "cpu 1 + rest");
    check_split(&st, &m, ref, 0, first + second, 29, &narrow, &flat, 0.0, "cpu at step 0");
    /* errors */
    se_neurons_t e = NULL;
    double x[8];
    se_test_ok(se_neurons_create(&m, 0, 2, &cpu, &e, &err), &err, "se_neurons_create (2 cells)");
    SE_EXPECT(&st, se_neurons_export_state(e, 1, 2, x, &err) == SE_ERR_ARG, "range past the end");
    SE_EXPECT(&st, strstr(err.message, "[1, 3)") != NULL, "message names the range: %s", err.message);
    SE_EXPECT(&st, se_neurons_import_state(e, -1, x, &err) == SE_ERR_ARG, "negative step count");
    se_neurons_destroy(e);
  } else {
    /* CUDA engines continue a CPU run, with each step kernel; then a CPU engine continues the
     * CUDA engine's state (exported after the streaming kernels' deferred gate update). */
    for (int k = 0; se_gpu_kernel_name(k); k++) {
      /* gen steps one morphology per population (this one has two): engine_stream runs it,
       * with the deferred gate update finished as here */
      if (k == SE_GPU_KERNEL_AUTO || k == SE_GPU_KERNEL_GEN)
        continue;
      se_neurons_options dev = cpu;
      dev.backend = SE_BACKEND_CUDA;
      dev.gpu_device = 0;
      dev.interleave_width = 32;
      dev.gpu_fused = k;
      char what[64];
      snprintf(what, sizeof what, "cpu + cuda %s", se_gpu_kernel_name(k));
      check_split(&st, &m, ref, first, second, 17, &cpu, &dev, 1e-6, what);

      se_neurons_t g = NULL, back = NULL;
      spikes *dummy = se_test_calloc(1, sizeof *dummy);
      int64_t size = 0;
      se_test_ok(se_neurons_create(&m, 0, n, &dev, &g, &err), &err, "se_neurons_create (cuda)");
      run(g, first, dummy);
      size = se_neurons_state_size(g, 0, n);
      double *state = se_test_calloc((size_t)size, sizeof *state);
      se_test_ok(se_neurons_export_state(g, 0, n, state, &err), &err, "export (cuda)");
      se_test_ok(se_neurons_create(&m, 0, n, &cpu, &back, &err), &err, "se_neurons_create (back)");
      se_test_ok(se_neurons_import_state(back, first, state, &err), &err, "import (cpu)");
      run(back, second, dummy);
      double dv = voltage_difference(ref, back, 0, &m);
      snprintf(what, sizeof what, "cuda %s + cpu", se_gpu_kernel_name(k));
      SE_EXPECT(&st, dv <= 1e-6, "%s: voltages differ by %g mV", what, dv);
      printf("%s: voltages within %g mV\n", what, dv);
      se_neurons_destroy(g);
      se_neurons_destroy(back);
      free(state);
      free(dummy);
    }
  }
  se_neurons_destroy(ref);
  se_neuron_model_free(&m);
  return se_test_finish(&st, gpu ? "neurons_state_gpu" : "neurons_state");
}
