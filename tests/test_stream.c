/* The streaming ("fused2") step's algorithm on the host (src/neurons_stream.c, the reference of
 * the CUDA kernel; docs/gpu.md) against the CPU backend over a 100 ms HH run of a mixed
 * population: synthetic classes, random trees numbered in no particular order (not depth first),
 * hh scattered through dendrites (state-dependent branch points), a single compartment and a
 * cable, several clamps per cell. Every width, on-chip stack depth and accumulator placement the
 * kernel can be given; a gate "finish" (what sync_state does) half way. Voltages within 1e-7 mV,
 * identical spike counts, spike times within 1e-7 ms, finished gates within 1e-9; coop's host model
 * bit for bit equal to fused2's. The generated ("gen") kernel: for each morphology alone, its
 * source compiles with NVRTC (no GPU needed) and, on a GPU, it runs against the CPU backend as
 * the other kernels; a population of several morphologies is refused with the reason. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "neurons_impl.h"
#include "neurons_math.h"
#include "neurons_coop.h"
#include "neurons_stream.h"
#include "se_test.h"
#ifdef SIMENGINE_HAVE_CUDA
#include <dlfcn.h>
#include <unistd.h>

#include "neurons_gen.h"
#endif
#include "swc.h"
#include "test_models.h"

enum { N_MORPH = 8, COPIES = 3 };

/* A random tree of n compartments: parent[i] = i - 1 with probability p_chain, else uniform
 * below i; regions drawn from `regions`. */
static void random_tree(se_morphology *mo, int32_t n, double p_chain, const int32_t *regions,
                        int n_regions, uint64_t *rng) {
  mo->n_compartments = n;
  mo->parent = se_test_calloc((size_t)n, sizeof *mo->parent);
  mo->length = se_test_calloc((size_t)n, sizeof *mo->length);
  mo->diameter = se_test_calloc((size_t)n, sizeof *mo->diameter);
  mo->region = se_test_calloc((size_t)n, sizeof *mo->region);
  for (int32_t i = 0; i < n; i++) {
    mo->parent[i] = i == 0 ? -1
                    : se_rand_uniform(rng, 0, 1) < p_chain
                        ? i - 1
                        : (int32_t)(se_rand_next(rng) % (uint64_t)i);
    mo->length[i] = i == 0 ? 20.0 : se_rand_uniform(rng, 5.0, 40.0);
    mo->diameter[i] = i == 0 ? 20.0 : se_rand_uniform(rng, 0.5, 3.0);
    mo->region[i] = i == 0 ? 1 : regions[se_rand_next(rng) % (uint64_t)n_regions];
  }
  mo->n_branches = 1;
}

/* The test population: COPIES cells of each of the N_MORPH morphologies, or (only >= 0) `copies`
 * cells of morphology `only` alone; clamps at the soma and (scatter) two more on a random
 * compartment of each cell, else two more at the soma. */
static void build_model(se_neuron_model *m, int only, int64_t copies_only, int scatter) {
  se_error err = {0};
  se_morphology mo[N_MORPH];
  memset(mo, 0, sizeof mo);
  uint64_t rng = 12345;
  const int32_t mixed[] = {3, 3, 3, 4}, all_hh[] = {1, 2, 4}, chain[] = {2};
  if (se_morphology_synthetic("small-low", 1, &mo[0], &err) != SE_OK ||
      se_morphology_synthetic("medium-high", 2, &mo[1], &err) != SE_OK) {
    fprintf(stderr, "%s\n", err.message);
    exit(1);
  }
  random_tree(&mo[2], 200, 0.3, mixed, 4, &rng);  /* bushy, hh (region 4) scattered */
  random_tree(&mo[3], 150, 0.85, mixed, 4, &rng); /* long runs */
  random_tree(&mo[4], 1, 1.0, chain, 1, &rng);    /* a single hh compartment */
  random_tree(&mo[5], 30, 1.0, chain, 1, &rng);   /* an hh cable */
  random_tree(&mo[6], 100, 0.5, all_hh, 3, &rng); /* hh everywhere */
  random_tree(&mo[7], 120, 0.0, mixed, 4, &rng);  /* no runs at all */
  int64_t copies[N_MORPH];
  for (int k = 0; k < N_MORPH; k++)
    copies[k] = COPIES;
  se_neuron_model_init(m);
  m->dt = 0.025;
  m->tstop = 100.0;
  if (se_neuron_model_set_cells(m, only >= 0 ? 1 : N_MORPH, only >= 0 ? &mo[only] : mo,
                                only >= 0 ? &copies_only : copies, &err) != SE_OK ||
      se_biophysics_alloc(&m->bio, 5, &err) != SE_OK) {
    fprintf(stderr, "%s\n", err.message);
    exit(1);
  }
  se_biophysics_set_prep_defaults(&m->bio);
  m->bio.gnabar_hh[4] = 0.06; /* hh in region 4 (apical) too, with pas */
  m->bio.gkbar_hh[4] = 0.02;
  m->bio.gl_hh[4] = 0.0002;
  for (int k = 0; k < N_MORPH; k++)
    se_morphology_free(&mo[k]);
  for (int64_t c = 0; c < m->n_cells; c++) {
    int32_t mo_c = m->cell_morphology[c];
    int32_t n = (int32_t)(m->morph_offsets[mo_c + 1] - m->morph_offsets[mo_c]);
    se_test_model_add_iclamp(m, c, 0, 5.0, 80.0, 0.2 + 0.15 * (double)(c % 4));
    int32_t comp = scatter ? (int32_t)(se_rand_next(&rng) % (uint64_t)n) : 0;
    se_test_model_add_iclamp(m, c, comp, 20.0 + (double)(c % 7), 30.0, 0.3);
    se_test_model_add_iclamp(m, c, comp, 40.0, 10.0, -0.1); /* two on one compartment */
  }
  if (se_neuron_model_validate(m, "test model", &err) != SE_OK) {
    fprintf(stderr, "%s\n", err.message);
    exit(1);
  }
}

/* A host run: fused2's reference with a stack depth and accumulator placement, or (coop: threads
 * per cell) the coop kernel's host model (neurons_coop.c) with plans built for cap_percent and
 * short_path (se_coop_build). */
typedef struct config {
  int width, stack_rows, onchip, coop, cap_percent, short_path;
} config;

static void run_config(se_test_state *st, const se_neuron_model *m, config cfg) {
  se_error err = {0};
  se_neurons_options opt = se_neurons_default_options();
  opt.interleave_width = cfg.width;
  opt.layout = cfg.width == 1 ? SE_LAYOUT_FLAT : SE_LAYOUT_INTERLEAVED;
  se_neurons_t a = NULL, b = NULL, f = NULL; /* f: fused2's model beside coop's, bit for bit */
  if (se_neurons_create(m, 0, m->n_cells, &opt, &a, &err) != SE_OK ||
      se_neurons_create(m, 0, m->n_cells, &opt, &b, &err) != SE_OK ||
      (cfg.coop && se_neurons_create(m, 0, m->n_cells, &opt, &f, &err) != SE_OK)) {
    fprintf(stderr, "%s\n", err.message);
    exit(1);
  }
  int64_t not_bitwise = 0, compared = 0;
  se_stream_tables tab;
  if (se_stream_build(b, &tab, &err) != SE_OK) {
    fprintf(stderr, "%s\n", err.message);
    exit(1);
  }
  se_coop_tables ctab = {0};
  if (cfg.coop &&
      se_coop_build(b, &tab, cfg.coop, cfg.cap_percent, cfg.short_path, &ctab, &err) != SE_OK) {
    fprintf(stderr, "%s\n", err.message);
    exit(1);
  }
  int onchip = cfg.onchip && tab.slots <= SE_STREAM_MAX_SLOTS;
  int64_t nc = m->n_cells, steps = se_neuron_model_steps(m), spikes_a = 0, spikes_b = 0;
  double *before = se_test_calloc((size_t)nc, sizeof *before), *after = se_test_calloc((size_t)nc, sizeof *after);
  double *ta = se_test_calloc((size_t)nc * 1000, sizeof *ta), *tb = se_test_calloc((size_t)nc * 1000, sizeof *tb);
  int64_t *na = se_test_calloc((size_t)nc, sizeof *na), *nb = se_test_calloc((size_t)nc, sizeof *nb);
  double max_dv = 0.0, max_gate = 0.0;
  int update = 0;
  for (int64_t step = 0; step < steps; step++) {
    double t = b->t;
    int rc = cfg.coop ? se_coop_reference_step(b, &ctab, update, before, after, &err)
                      : se_stream_reference_step(b, &tab, cfg.stack_rows, onchip, update, before,
                                                 after, &err);
    if (rc == SE_OK && f)
      rc = se_stream_reference_step(f, &tab, 0, 0, update, before, after, &err);
    if (se_neurons_step(a, &err) != SE_OK || rc != SE_OK) {
      fprintf(stderr, "%s\n", err.message);
      exit(1);
    }
    if (f) {
      f->steps_taken++;
      f->t = (double)f->steps_taken * f->dt;
      for (int64_t c = 0; c < nc; c++) {
        const int32_t n_comp = a->groups[a->cell_group[c]].n_comp;
        for (int32_t i = 0; i < n_comp; i++, compared++) {
          const int64_t sl = se_neurons_slot(b, c, i);
          not_bitwise += memcmp(&b->v[sl], &f->v[sl], sizeof(double)) != 0 ||
                         memcmp(&b->m[sl], &f->m[sl], sizeof(double)) != 0;
        }
      }
    }
    update = 1;
    b->steps_taken++;
    b->t = (double)b->steps_taken * b->dt;
    int64_t n;
    const double *time;
    const int64_t *cell;
    se_neurons_take_spikes(a, &n, &time, &cell, &err);
    for (int64_t k = 0; k < n; k++, spikes_a++)
      if (na[cell[k]] < 1000)
        ta[cell[k] * 1000 + na[cell[k]]++] = time[k];
    for (int64_t c = 0; c < nc; c++)
      if (before[c] < m->spike_threshold && m->spike_threshold <= after[c]) {
        spikes_b++;
        if (nb[c] < 1000)
          tb[c * 1000 + nb[c]++] = se_spike_time(t, m->dt, m->spike_threshold, before[c], after[c]);
      }
    for (int64_t c = 0; c < nc; c++) {
      const se_group *g = &a->groups[a->cell_group[c]];
      for (int32_t i = 0; i < g->n_comp; i++) {
        double d = fabs(se_neurons_voltage(a, c, i) - se_neurons_voltage(b, c, i));
        if (!(d <= max_dv))
          max_dv = isnan(d) ? INFINITY : d;
      }
    }
    if (step == steps / 2) { /* what sync_state does: finish the gates, then no double update */
      se_stream_reference_finish(b, &tab);
      if (f)
        se_stream_reference_finish(f, &tab);
      update = 0;
      for (int64_t c = 0; c < nc; c++) /* cells only: the CPU also steps padding lanes */
        for (int32_t i = 0; i < a->groups[a->cell_group[c]].n_comp; i++) {
          int64_t s = se_neurons_slot(a, c, i);
          double d = fmax(fabs(a->m[s] - b->m[s]),
                          fmax(fabs(a->h[s] - b->h[s]), fabs(a->n[s] - b->n[s])));
          if (!(d <= max_gate))
            max_gate = isnan(d) ? INFINITY : d;
        }
    }
  }
  double max_dt = 0.0;
  int64_t count_mismatch = 0;
  for (int64_t c = 0; c < nc; c++) {
    if (na[c] != nb[c])
      count_mismatch++;
    for (int64_t k = 0; k < na[c] && k < nb[c]; k++)
      max_dt = fmax(max_dt, fabs(ta[c * 1000 + k] - tb[c * 1000 + k]));
  }
  int plain = 0, planned = 0; /* morphologies whose plan takes phase 1b's short path */
  for (int32_t k = 0; k < ctab.n_morph; k++) {
    planned += ctab.morph[k].steps > 0;
    plain += ctab.morph[k].plain;
  }
  if (cfg.coop)
    printf("coop model, %d threads per cell, width %2d, cap %3d%%: max |dv| %.3g mV, gates "
           "%.3g, %lld spikes (cpu %lld), max |dt| %.3g ms; fused2's model: %lld of %lld "
           "compartment-steps differ in a bit; short path in %d of %d plans\n",
           cfg.coop, cfg.width, cfg.cap_percent, max_dv, max_gate, (long long)spikes_b,
           (long long)spikes_a, max_dt, (long long)not_bitwise, (long long)compared, plain,
           planned);
  else
    printf("width %2d, stack rows %4d, accumulators %s (%d slots): max |dv| %.3g mV, gates %.3g, "
           "%lld spikes (cpu %lld), max |dt| %.3g ms\n",
           cfg.width, cfg.stack_rows, onchip ? "on chip" : "in rhs", tab.slots, max_dv, max_gate,
           (long long)spikes_b, (long long)spikes_a, max_dt);
  SE_EXPECT(st, not_bitwise == 0 && (!cfg.coop || compared > 0),
            "coop vs fused2 model: %lld of %lld compartment-steps differ", (long long)not_bitwise,
            (long long)compared);
  SE_EXPECT(st, !cfg.coop || cfg.short_path != 1 || plain > 0,
            "coop: the short path forced on, taken in no plan");
  SE_EXPECT(st, max_dv <= 1e-7, "max voltage difference %g mV", max_dv);
  SE_EXPECT(st, max_gate <= 1e-9, "max gate difference %g after finish", max_gate);
  SE_EXPECT(st, count_mismatch == 0 && spikes_a == spikes_b, "%lld cells with other spike counts",
            (long long)count_mismatch);
  SE_EXPECT(st, spikes_a > 2 * nc, "too few spikes (%lld) to test anything", (long long)spikes_a);
  SE_EXPECT(st, max_dt <= 1e-7, "max spike time difference %g ms", max_dt);
  free(before);
  free(after);
  free(ta);
  free(tb);
  free(na);
  free(nb);
  se_coop_free(&ctab);
  se_stream_free(&tab);
  se_neurons_destroy(a);
  se_neurons_destroy(b);
  if (f)
    se_neurons_destroy(f);
}

/* Table invariants on the model: every non-root row is PREV or pushes into a slot its parent
 * owns; DCONST exactly where no hh lies below. */
static void check_tables(se_test_state *st, const se_neuron_model *m) {
  se_error err = {0};
  se_neurons_t e = NULL;
  se_neurons_options opt = se_neurons_default_options();
  if (se_neurons_create(m, 0, m->n_cells, &opt, &e, &err) != SE_OK)
    exit(1);
  se_stream_tables tab;
  if (se_stream_build(e, &tab, &err) != SE_OK)
    exit(1);
  int bad = 0, dpush = 0, dconst = 0, state_pas = 0;
  for (int64_t mo = 0; mo < m->n_morphologies; mo++) {
    int64_t k0 = m->morph_offsets[mo], n = m->morph_offsets[mo + 1] - k0;
    for (int64_t i = 1; i < n; i++) {
      uint32_t meta = tab.rows[k0 + i].meta;
      dpush += !!(meta & SE_STREAM_DPUSH);
      dconst += !!(meta & SE_STREAM_DCONST);
      state_pas += !(meta & (SE_STREAM_DCONST | SE_STREAM_HH));
      int32_t p = m->parent[k0 + i];
      if ((p == i - 1) != !!(meta & SE_STREAM_PREV))
        bad++;
      if (!(meta & SE_STREAM_PREV)) {
        uint32_t pm = tab.rows[k0 + p].meta;
        if (!(pm & SE_STREAM_OWN) || SE_STREAM_OWN_SLOT(pm) != SE_STREAM_PUSH_SLOT(meta))
          bad++;
      }
    }
  }
  SE_EXPECT(st, bad == 0, "%d inconsistent rows", bad);
  /* every kind of row is exercised */
  SE_EXPECT(st, dpush > 0 && dconst > 0 && state_pas > 0, "rows: %d DPUSH, %d DCONST, %d passive "
            "with hh below", dpush, dconst, state_pas);
  printf("rows: %d DPUSH, %d DCONST, %d passive with hh below\n", dpush, dconst, state_pas);
  SE_EXPECT(st, tab.slots >= 1 && tab.slots <= 64, "%d slots", tab.slots);
  se_stream_free(&tab);
  se_neurons_destroy(e);
}

/* The CUDA kernels themselves (when a GPU is visible): the CPU backend against `kernel` (fused2
 * with the given knobs, coop or gen), a se_neurons_sync (which finishes the deferred gates) every
 * 97 steps; voltages of every compartment and the gates compared at each sync, spikes at the end
 * (more than min_per_cell per cell on average, so that spike times are compared at all). */
static void run_gpu_spiking(se_test_state *st, const se_neuron_model *m, int kernel, int width,
                            const char *rows, const char *acc, const char *ahead,
                            const char *hints, int64_t min_per_cell) {
  se_error err = {0};
  rows ? setenv("SE_STREAM_ROWS", rows, 1) : unsetenv("SE_STREAM_ROWS");
  acc ? setenv("SE_STREAM_ACC", acc, 1) : unsetenv("SE_STREAM_ACC");
  ahead ? setenv("SE_STREAM_AHEAD", ahead, 1) : unsetenv("SE_STREAM_AHEAD");
  hints ? setenv("SE_STREAM_HINTS", hints, 1) : unsetenv("SE_STREAM_HINTS");
  se_neurons_options oc = se_neurons_default_options(), og = oc;
  oc.interleave_width = og.interleave_width = width;
  og.backend = SE_BACKEND_CUDA;
  og.gpu_fused = kernel;
  se_neurons_t a = NULL, b = NULL;
  if (se_neurons_create(m, 0, m->n_cells, &oc, &a, &err) != SE_OK ||
      se_neurons_create(m, 0, m->n_cells, &og, &b, &err) != SE_OK) {
    fprintf(stderr, "%s\n", err.message);
    exit(1);
  }
  int64_t nc = m->n_cells, steps = se_neuron_model_steps(m), count[2] = {0, 0};
  double *times[2];
  int64_t *cells[2];
  times[0] = se_test_calloc((size_t)nc * 1000, sizeof(double));
  times[1] = se_test_calloc((size_t)nc * 1000, sizeof(double));
  cells[0] = se_test_calloc((size_t)nc * 1000, sizeof(int64_t));
  cells[1] = se_test_calloc((size_t)nc * 1000, sizeof(int64_t));
  double max_dv = 0.0, max_gate = 0.0;
  for (int64_t step = 1; step <= steps; step++) {
    if (se_neurons_step(a, &err) != SE_OK || se_neurons_step(b, &err) != SE_OK) {
      fprintf(stderr, "%s\n", err.message);
      exit(1);
    }
    se_neurons_t both[2] = {a, b};
    for (int k = 0; k < 2; k++) {
      int64_t n;
      const double *t;
      const int64_t *c;
      if (se_neurons_take_spikes(both[k], &n, &t, &c, &err) != SE_OK) {
        fprintf(stderr, "%s\n", err.message);
        exit(1);
      }
      for (int64_t q = 0; q < n && count[k] < nc * 1000; q++, count[k]++) {
        times[k][count[k]] = t[q];
        cells[k][count[k]] = c[q];
      }
    }
    if (step % 97 != 0 && step != steps)
      continue;
    if (se_neurons_sync(b, &err) != SE_OK) {
      fprintf(stderr, "%s\n", err.message);
      exit(1);
    }
    for (int64_t c = 0; c < nc; c++)
      for (int32_t i = 0; i < a->groups[a->cell_group[c]].n_comp; i++) {
        int64_t s = se_neurons_slot(a, c, i);
        double dv = fabs(a->v[s] - b->v[s]);
        double dg = fmax(fabs(a->m[s] - b->m[s]),
                         fmax(fabs(a->h[s] - b->h[s]), fabs(a->n[s] - b->n[s])));
        if (!(dv <= max_dv))
          max_dv = isnan(dv) ? INFINITY : dv;
        if (!(dg <= max_gate))
          max_gate = isnan(dg) ? INFINITY : dg;
      }
  }
  /* spikes: same multiset of (cell, time) within 1e-7 ms; the device reports them unordered */
  int64_t matched = 0;
  double max_dt = 0.0;
  for (int64_t p = 0; p < count[0]; p++) {
    double best = INFINITY;
    for (int64_t q = 0; q < count[1]; q++)
      if (cells[1][q] == cells[0][p])
        best = fmin(best, fabs(times[1][q] - times[0][p]));
    if (best <= 1e-7)
      matched++;
    max_dt = fmax(max_dt, best);
  }
  const char *lanes = getenv("SE_COOP_LANES"), *batches = getenv("SE_COOP_STAGE_SHORT");
  printf("GPU %s (threads per cell %s, batches %s) width %2d rows %s acc %s "
         "ahead %s hints %s: max |dv| %.3g mV, gates %.3g, %lld spikes (cpu %lld, %lld matched), "
         "max |dt| %.3g ms\n",
         se_gpu_kernel_name(kernel), lanes ? lanes : "-", batches ? batches : "default", width,
         rows ? rows : "auto", acc ? acc : "auto",
         ahead ? ahead : "1",
         hints ? hints : "1",
         max_dv, max_gate, (long long)count[1], (long long)count[0], (long long)matched, max_dt);
  SE_EXPECT(st, max_dv <= 1e-7, "GPU: max voltage difference %g mV", max_dv);
  SE_EXPECT(st, max_gate <= 1e-9, "GPU: max gate difference %g", max_gate);
  SE_EXPECT(st, count[0] == count[1] && matched == count[0] && count[0] > min_per_cell * nc,
            "GPU: %lld spikes, CPU %lld, %lld matched", (long long)count[1], (long long)count[0],
            (long long)matched);
  for (int k = 0; k < 2; k++) {
    free(times[k]);
    free(cells[k]);
  }
  se_neurons_destroy(a);
  se_neurons_destroy(b);
}

#ifdef SIMENGINE_HAVE_CUDA
/* The cubin cache (no GPU needed): an entry written by the first compile into a directory made
 * with its parents and read back by the second, identical; a damaged entry compiled again and
 * rewritten; an unwritable directory passed over; SE_GEN_CACHE naming or turning off the
 * directory. */
static void check_gen_cache(se_test_state *st, const char *source) {
  se_error err = {0};
  char tmpl[] = "/tmp/se_gen_cache_XXXXXX", dir[128], path[512] = "";
  SE_EXPECT(st, mkdtemp(tmpl) != NULL, "mkdtemp");
  snprintf(dir, sizeof dir, "%s/a/b", tmpl);
  char *cubin[4] = {NULL, NULL, NULL, NULL};
  size_t size[4] = {0, 0, 0, 0};
  int cached[4] = {-1, -1, -1, -1};
  for (int k = 0; k < 2; k++)
    se_test_ok(se_neurons_gen_cubin(source, 9, 0, 0, dir, &cubin[k], &size[k], &cached[k], &err),
               &err, "se_neurons_gen_cubin");
  SE_EXPECT(st, cached[0] == 0 && cached[1] == 1, "compiled then cached: %d %d", cached[0],
            cached[1]);
  SE_EXPECT(st, size[0] == size[1] && size[0] > 0 && !memcmp(cubin[0], cubin[1], size[0]),
            "the cached cubin differs (%zu and %zu bytes)", size[0], size[1]);
  /* damage the entry: it is compiled again and rewritten */
  char cmd[256];
  snprintf(cmd, sizeof cmd, "ls %s/gen-*.cubin", dir);
  FILE *ls = popen(cmd, "r");
  if (ls) {
    if (!fgets(path, sizeof path, ls))
      path[0] = '\0';
    path[strcspn(path, "\n")] = '\0';
    pclose(ls);
  }
  FILE *f = path[0] ? fopen(path, "r+b") : NULL;
  SE_EXPECT(st, f != NULL, "no cache entry in %s", dir);
  if (f) {
    fseek(f, 1000, SEEK_SET);
    const int byte = fgetc(f);
    fseek(f, 1000, SEEK_SET);
    fputc(byte ^ 1, f); /* one bit of the cubin */
    fclose(f);
  }
  se_test_ok(se_neurons_gen_cubin(source, 9, 0, 0, dir, &cubin[2], &size[2], &cached[2], &err),
             &err, "se_neurons_gen_cubin (damaged entry)");
  se_test_ok(se_neurons_gen_cubin(source, 9, 0, 0, dir, &cubin[3], &size[3], &cached[3], &err),
             &err, "se_neurons_gen_cubin (rewritten entry)");
  SE_EXPECT(st, cached[2] == 0 && cached[3] == 1 && size[3] == size[0],
            "damaged entry: compiled %d, then cached %d", !cached[2], cached[3]);
  for (int k = 0; k < 4; k++)
    free(cubin[k]);
  /* an unwritable place: compiled, no error */
  char *c = NULL;
  size_t n = 0;
  int hit = -1;
  SE_EXPECT(st, se_neurons_gen_cubin(source, 9, 0, 0, "/proc/se_gen_cache", &c, &n, &hit,
                                     &err) == SE_OK && hit == 0 && n == size[0],
            "unwritable cache: %s", err.message);
  free(c);
  char buf[256];
  setenv("SE_GEN_CACHE", "off", 1);
  SE_EXPECT(st, se_neurons_gen_cache_dir(buf, sizeof buf) == NULL, "SE_GEN_CACHE=off");
  setenv("SE_GEN_CACHE", dir, 1);
  const char *got = se_neurons_gen_cache_dir(buf, sizeof buf);
  SE_EXPECT(st, got && !strcmp(got, dir), "SE_GEN_CACHE=%s: %s", dir, got ? got : "(none)");
  unsetenv("SE_GEN_CACHE");
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpl);
  SE_EXPECT(st, system(cmd) == 0, "%s", cmd);
  printf("gen cache: compiled, read back, damaged entry recompiled (%zu B of cubin)\n", size[0]);
}

/* The gen kernels' generated source compiled by the host C++ compiler (tests/gen_host_shim.h) and
 * run thread by thread (tests/gen_host_driver.cpp) on a CPU engine's arrays (the same slot layout
 * as the device's), against the CPU backend over the model's 100 ms: voltages within 1e-7 mV,
 * gates within 1e-9 after the deferred update is finished (se_stream_reference_finish), every
 * spike matched within 1e-7 ms. The generator's output checked in CI, without a GPU: one
 * morphology in cell order, and several through their group tables (threads numbered group by
 * group, each group's lanes its threads, as the CUDA backend's with the launch order taken as
 * the groups' order). Where the hh rows are split off (se_neurons_gen_split) their kernels run
 * first; warp-per-subtree kernels (se_neurons_gen_warps) run as fibers meeting at their barriers.
 * Returns the number of morphologies whose hh rows were split off; *warp_kernels (unless NULL)
 * the number with a warp per subtree; *state_hash (unless NULL) a hash of the cells' final v, m,
 * h and n bits (two runs agree bit for bit where their hashes do). */
typedef void (*gen_kernel_fn)(double *, double *, double *, double *, const long long *,
                              const int *, const double *, const double *, const double *,
                              unsigned long long *, double *, long long *, long long,
                              unsigned long long *, double *, double *, const void *,
                              const long long *, long long, double, int);
/* the hh rows' kernel of a morphology with SE_GEN_HH_SPLIT (se_gen_currents_<m>) */
typedef void (*gen_currents_fn)(const double *, double *, double *, double *, double *, double *,
                                const void *, long long, int);
typedef struct host_group { /* the generated source's se_gen_group */
  int64_t base, thread0;
  int32_t lanes, pad;
} host_group;

/* One call of a step kernel with its arguments: what each fiber of a warp-per-subtree kernel's
 * launch runs (se_gen_host_launch). */
typedef struct gen_call {
  gen_kernel_fn kernel;
  double *v, *m, *h, *n, *time, *rhs, *diag, t_now;
  const double *delay, *duration, *amplitude;
  const long long *ptr, *lane_cell;
  const int *comp;
  unsigned long long *count, *bad;
  long long *cell, capacity, threads;
  const void *groups;
  int update;
} gen_call;

static void gen_call_run(void *p) {
  const gen_call *c = p;
  c->kernel(c->v, c->m, c->h, c->n, c->ptr, c->comp, c->delay, c->duration, c->amplitude,
            c->count, c->time, c->cell, c->capacity, c->bad, c->rhs, c->diag, c->groups,
            c->lane_cell, c->threads, c->t_now, c->update);
}

static int run_gen_host(se_test_state *st, const se_neuron_model *m, int width, const char *what,
                        int *warp_kernels, uint64_t *state_hash) {
  se_error err = {0};
  se_neurons_options opt = se_neurons_default_options();
  opt.interleave_width = width;
  se_neurons_t a = NULL, b = NULL;
  se_test_ok(se_neurons_create(m, 0, m->n_cells, &opt, &a, &err), &err, "create (reference)");
  se_test_ok(se_neurons_create(m, 0, m->n_cells, &opt, &b, &err), &err, "create (gen host)");
  const se_gen_options go = se_gen_options_from_env();
  char *src = NULL, dir[] = "/tmp/se_gen_host_XXXXXX", path[256], cmd[1024];
  se_test_ok(se_neurons_gen_source(b, &go, &src, &err), &err, "se_neurons_gen_source");
  SE_EXPECT(st, mkdtemp(dir) != NULL, "mkdtemp");
  snprintf(path, sizeof path, "%s/gen.cpp", dir);
  FILE *f = fopen(path, "w");
  SE_EXPECT(st, f && fputs(src, f) >= 0 && fclose(f) == 0, "writing %s", path);
  /* in cell order a kernel takes the cell count, else its groups' threads (se_gen_step) */
  const int in_order = se_neurons_gen_in_cell_order(b);
  free(src);
  snprintf(cmd, sizeof cmd,
           "c++ -std=c++17 -O1 -w -shared -fPIC -I%s/src -include %s/tests/gen_host_shim.h "
           "%s %s/tests/gen_host_driver.cpp -o %s/gen.so",
           SE_SOURCE_DIR, SE_SOURCE_DIR, path, SE_SOURCE_DIR, dir);
  const int built = system(cmd) == 0;
  SE_EXPECT(st, built, "host compile of the generated kernels failed: %s", cmd);
  snprintf(path, sizeof path, "%s/gen.so", dir);
  void *so = built ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
  void (*at)(unsigned, unsigned, unsigned) =
      so ? (void (*)(unsigned, unsigned, unsigned))(uintptr_t)dlsym(so, "se_gen_host_at") : NULL;
  int (*launch)(void (*)(void *), void *, unsigned, unsigned) =
      so ? (int (*)(void (*)(void *), void *, unsigned, unsigned))(uintptr_t)dlsym(
               so, "se_gen_host_launch")
         : NULL;
  SE_EXPECT(st, !built || (at && launch), "dlopen/dlsym %s: %s", path, dlerror());
  const int64_t nc = b->n_cells, ns = b->n_stim, W = width, ng = b->n_groups;
  /* the morphologies' kernels, group tables and thread counts */
  int n_k = 0;
  int32_t *morph = se_test_calloc((size_t)ng, sizeof *morph);
  gen_kernel_fn *kernel = se_test_calloc((size_t)ng, sizeof *kernel);
  gen_currents_fn *currents = se_test_calloc((size_t)ng, sizeof *currents);
  int *n_hh = se_test_calloc((size_t)ng, sizeof *n_hh), n_split = 0, n_warps = 0;
  int *warps = se_test_calloc((size_t)ng, sizeof *warps);
  host_group **tab = se_test_calloc((size_t)ng, sizeof *tab);
  int64_t *threads = se_test_calloc((size_t)ng, sizeof *threads);
  for (int64_t g = 0; at && g < ng; g++) {
    int k = 0;
    while (k < n_k && morph[k] != b->groups[g].morphology)
      k++;
    if (k == n_k) {
      morph[n_k] = b->groups[g].morphology;
      tab[n_k] = se_test_calloc((size_t)ng, sizeof **tab);
      char name[64];
      snprintf(name, sizeof name, "se_gen_step_%d", (int)morph[n_k]);
      kernel[n_k] = (gen_kernel_fn)(uintptr_t)dlsym(so, name);
      SE_EXPECT(st, kernel[n_k] != NULL, "no kernel %s in %s", name, path);
      /* the hh rows' kernel where the generator split them off (se_neurons_gen_split) */
      const int split = se_neurons_gen_split(b, morph[n_k], &go);
      snprintf(name, sizeof name, "se_gen_currents_%d", (int)morph[n_k]);
      currents[n_k] = (gen_currents_fn)(uintptr_t)dlsym(so, name);
      SE_EXPECT(st, !currents[n_k] == !split, "kernel %s %s in %s", name,
                split ? "missing" : "unexpected", path);
      for (int32_t i = 0; i < b->groups[g].n_comp; i++)
        n_hh[n_k] += b->topology[morph[n_k]].has_hh[i] != 0;
      n_split += currents[n_k] != NULL;
      warps[n_k] = se_neurons_gen_warps(b, morph[n_k], &go);
      n_warps += warps[n_k] > 1;
      n_k++;
    }
    tab[k][threads[k] / W] = (host_group){b->groups[g].base, g * W, b->groups[g].lanes, 0};
    threads[k] += W;
  }
  if (at && n_k > 0) {
    /* each thread's clamps by compartment and its cell: the CUDA backend's thread maps, the
     * groups launched in their order (thread = group * width + lane) */
    int64_t *position = se_test_calloc((size_t)ng + 1, sizeof *position);
    for (int64_t g = 0; g < ng; g++)
      position[g] = g;
    int64_t *ptr = NULL, *lane_cell = NULL;
    int32_t *order = NULL;
    se_test_ok(se_neurons_cuda_thread_maps(b, position, ng * W, &lane_cell, &ptr, &order, &err),
               &err, "se_neurons_cuda_thread_maps");
    int *comp = se_test_calloc((size_t)ns + 1, sizeof *comp);
    double *clamp = se_test_calloc(3 * (size_t)ns + 1, sizeof *clamp);
    for (int64_t j = 0; j < ns; j++) {
      comp[j] = b->stim_comp[order[j]];
      clamp[j] = b->stim_delay[order[j]];
      clamp[ns + j] = b->stim_duration[order[j]];
      clamp[2 * ns + j] = b->stim_amplitude[order[j]];
    }
    double *rhs = se_test_calloc((size_t)b->n_slots + 1, sizeof *rhs);
    double *diag = se_test_calloc((size_t)b->n_slots + 1, sizeof *diag);
    const int64_t capacity = nc * 2000, steps = se_neuron_model_steps(m);
    double *time_a = se_test_calloc((size_t)capacity, sizeof *time_a);
    double *time_b = se_test_calloc((size_t)capacity, sizeof *time_b);
    int64_t *cell_a = se_test_calloc((size_t)capacity, sizeof *cell_a);
    long long *cell_b = se_test_calloc((size_t)capacity, sizeof *cell_b);
    unsigned long long count_b = 0, bad = 0;
    int64_t count_a = 0;
    for (int64_t s = 0; s < steps; s++) {
      for (int k = 0; k < n_k && kernel[k]; k++) {
        const long long nt = threads[k]; /* in cell order the threads past the cells return */
        for (int j = 0; currents[k] && j < n_hh[k]; j++) /* grid (threads / 256, hh rows) */
          for (long long t = 0; t < nt; t++) {
            at((unsigned)(t / 256), (unsigned)j, (unsigned)(t % 256));
            currents[k](b->v, b->m, b->h, b->n, rhs, diag, tab[k], in_order ? nc : nt, s > 0);
          }
        gen_call call = {kernel[k], b->v, b->m, b->h, b->n, time_b, rhs, diag, a->t,
                         clamp, clamp + ns, clamp + 2 * ns, (const long long *)ptr,
                         (const long long *)lane_cell, comp, &count_b, &bad, cell_b, capacity,
                         in_order ? nc : nt, tab[k], s > 0};
        if (warps[k] > 1) { /* blocks of 32 cells, warps[k] warps each, meeting at barriers */
          SE_EXPECT(st, launch(gen_call_run, &call, (unsigned)((nt + 31) / 32),
                               32u * (unsigned)warps[k]) == 0, "se_gen_host_launch");
          continue;
        }
        for (long long t = 0; t < nt; t++) {
          at((unsigned)(t / 32), 0, (unsigned)(t % 32));
          gen_call_run(&call);
        }
      }
      se_test_ok(se_neurons_step(a, &err), &err, "step (reference)");
      int64_t n;
      const double *t;
      const int64_t *c;
      se_test_ok(se_neurons_take_spikes(a, &n, &t, &c, &err), &err, "spikes");
      for (int64_t q = 0; q < n && count_a < capacity; q++, count_a++) {
        time_a[count_a] = t[q];
        cell_a[count_a] = c[q];
      }
    }
    se_stream_tables stab;
    se_test_ok(se_stream_build(b, &stab, &err), &err, "se_stream_build");
    se_stream_reference_finish(b, &stab); /* the gate update the next step would do first */
    se_stream_free(&stab);
    double max_dv = 0.0, max_gate = 0.0;
    uint64_t hash = 0xcbf29ce484222325ull; /* FNV-1a over the bytes of b's state */
    for (int64_t c = 0; c < nc; c++)
      for (int32_t i = 0; i < a->groups[a->cell_group[c]].n_comp; i++) {
        const int64_t s = se_neurons_slot(a, c, i);
        const double state[4] = {b->v[s], b->m[s], b->h[s], b->n[s]};
        for (size_t k = 0; k < sizeof state; k++)
          hash = (hash ^ ((const unsigned char *)state)[k]) * 0x100000001b3ull;
        const double dv = fabs(a->v[s] - b->v[s]);
        const double dg = fmax(fabs(a->m[s] - b->m[s]),
                               fmax(fabs(a->h[s] - b->h[s]), fabs(a->n[s] - b->n[s])));
        max_dv = dv <= max_dv ? max_dv : (isnan(dv) ? INFINITY : dv);
        max_gate = dg <= max_gate ? max_gate : (isnan(dg) ? INFINITY : dg);
      }
    int64_t matched = 0;
    for (int64_t p = 0; p < count_a; p++) {
      double best = INFINITY;
      for (unsigned long long q = 0; q < count_b; q++)
        if (cell_b[q] == cell_a[p])
          best = fmin(best, fabs(time_b[q] - time_a[p]));
      matched += best <= 1e-7;
    }
    printf("gen on the host, %s, %d kernel%s (%d with hh rows split off, %d with a warp per "
           "subtree), width %2d: max |dv| %.3g mV, gates %.3g, %llu spikes (cpu %lld, %lld "
           "matched)\n", what, n_k, n_k == 1 ? "" : "s", n_split, n_warps, width, max_dv,
           max_gate, count_b, (long long)count_a, (long long)matched);
    SE_EXPECT(st, max_dv <= 1e-7 && max_gate <= 1e-9 && bad == 0,
              "gen on the host, %s: |dv| %g mV, gates %g, bad cell %llu", what, max_dv, max_gate,
              bad);
    SE_EXPECT(st, (int64_t)count_b == count_a && matched == count_a && count_a >= nc,
              "gen on the host, %s: %llu spikes, cpu %lld, %lld matched", what, count_b,
              (long long)count_a, (long long)matched);
    if (state_hash)
      *state_hash = hash;
    free(ptr);
    free(lane_cell);
    free(order);
    free(comp);
    free(clamp);
    free(position);
    free(rhs);
    free(diag);
    free(time_a);
    free(time_b);
    free(cell_a);
    free(cell_b);
  }
  for (int k = 0; k < n_k; k++)
    free(tab[k]);
  free(tab);
  free(morph);
  free(kernel);
  free(currents);
  free(n_hh);
  free(warps);
  free(threads);
  if (so)
    dlclose(so);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  SE_EXPECT(st, system(cmd) == 0, "%s", cmd);
  se_neurons_destroy(a);
  se_neurons_destroy(b);
  if (warp_kernels)
    *warp_kernels = n_warps;
  return n_split;
}

/* The gen kernel's generator without a GPU: the population of several morphologies compiled by
 * NVRTC (a kernel per morphology, the hh rows in chunks), a morphology larger than
 * SE_GEN_MAX_ROWS refused with the reason, each morphology alone (37 cells: a partial last
 * group) compiled for sm_90 with every y in shared memory and with every y in registers (and
 * the hh rows split off where its clamps allow: morphology 0's), then with a warp per subtree
 * (8 per block) where its clamps allow. */
/* m: one cell of each of mo[0 .. n) over 1 ms at 0.025 ms, the prep biophysics over 5 regions
 * (gen's applicability and rule checks). */
static void one_cell_each(se_neuron_model *m, const se_morphology *mo, int n) {
  se_error err = {0};
  int64_t *ones = se_test_calloc((size_t)n, sizeof *ones);
  for (int k = 0; k < n; k++)
    ones[k] = 1;
  se_neuron_model_init(m);
  m->dt = 0.025;
  m->tstop = 1.0;
  se_test_ok(se_neuron_model_set_cells(m, n, mo, ones, &err), &err, "se_neuron_model_set_cells");
  se_test_ok(se_biophysics_alloc(&m->bio, 5, &err), &err, "se_biophysics_alloc");
  se_biophysics_set_prep_defaults(&m->bio);
  free(ones);
}

/* gen's default rule (cuda/neurons_gen.c warps_rule and plan_rules, docs/gpu.md "Session 15") on
 * the six synthetic classes, one cell each with soma hh: 4 warps with the hh rows in the block up
 * to 128 rows, 4 warps up to 512 rows, else 8; above 128 rows the hh rows split off and some y in
 * shared memory; prefetches for medium-low only. */
static void check_gen_rule(se_test_state *st) {
  static const char *const cls[6] = {"small-low",  "small-high", "medium-low",
                                     "medium-high", "big-low",   "big-high"};
  static const int warps[6] = {4, 4, 4, 4, 8, 8};
  const se_gen_options go = se_gen_options_from_env();
  se_gen_options all_in_registers = go, two_warps = go, two_warps_48 = go;
  all_in_registers.warp_reg_rows = SE_GEN_MAX_ROWS;
  two_warps.warps = two_warps_48.warps = 2;
  two_warps_48.warp_reg_rows = 48;
  for (int k = 0; k < 6; k++) {
    se_error err = {0};
    se_morphology mo = {0};
    se_neuron_model m;
    se_test_ok(se_morphology_synthetic(cls[k], 1, &mo, &err), &err, cls[k]);
    one_cell_each(&m, &mo, 1);
    se_neurons_options opt = se_neurons_default_options();
    opt.interleave_width = 32;
    se_neurons_t e = NULL;
    se_test_ok(se_neurons_create(&m, 0, 1, &opt, &e, &err), &err, "create");
    const int w = se_neurons_gen_warps(e, 0, &go), split = se_neurons_gen_split(e, 0, &go);
    SE_EXPECT(st, w == warps[k] && split == (mo.n_compartments > 128),
              "gen's rule on %s (%d rows): %d warps (want %d), hh rows split off %d", cls[k],
              mo.n_compartments, w, warps[k], split);
    /* above 128 rows the y of each warp's earlier rows in shared memory, within the auto
     * choice's limit; with 2 warps on the big classes 48 rows in registers would need more, so
     * the rule keeps more */
    const size_t smem = se_neurons_gen_smem(e, 0, &go, NULL),
                 smem_all = se_neurons_gen_smem(e, 0, &all_in_registers, NULL);
    SE_EXPECT(st, smem <= SE_GEN_AUTO_MAX_SMEM && (smem > smem_all) == (mo.n_compartments > 128),
              "gen's rule on %s: %zu B of shared memory per block (%zu B with every y in "
              "registers)", cls[k], smem, smem_all);
    /* prefetches only for the long sections of 129 to 512 rows: medium-low */
    char *src = NULL;
    se_test_ok(se_neurons_gen_source(e, &go, &src, &err), &err, "se_neurons_gen_source");
    const int prefetches = strstr(src, "SE_GEN_PREFETCH(V + ") != NULL;
    SE_EXPECT(st, prefetches == (k == 2), "gen's rule on %s: prefetches %d", cls[k], prefetches);
    free(src);
    if (mo.n_compartments > 512) {
      const size_t smem2 = se_neurons_gen_smem(e, 0, &two_warps, NULL),
                   smem2_48 = se_neurons_gen_smem(e, 0, &two_warps_48, NULL);
      SE_EXPECT(st, smem2_48 > SE_GEN_AUTO_MAX_SMEM && smem2 <= SE_GEN_AUTO_MAX_SMEM,
                "gen's rule on %s with 2 warps: %zu B per block (%zu B with 48 rows per warp "
                "in registers)", cls[k], smem2, smem2_48);
    }
    se_neurons_destroy(e);
    se_neuron_model_free(&m);
    se_morphology_free(&mo);
  }
}

/* m: one cell of synthetic class cls over 3 ms, clamped at the soma from 0.5 ms (gen's second
 * level of pieces, which the big classes take). */
static void clamped_cell(se_neuron_model *m, const char *cls) {
  se_error err = {0};
  se_morphology mo = {0};
  se_test_ok(se_morphology_synthetic(cls, 1, &mo, &err), &err, cls);
  one_cell_each(m, &mo, 1);
  m->tstop = 3.0;
  se_test_model_add_iclamp(m, 0, 0, 0.5, 2.0, 2.0);
  se_test_ok(se_neuron_model_validate(m, cls, &err), &err, "se_neuron_model_validate");
  se_morphology_free(&mo);
}

/* A CPU engine (width 32) of clamped_cell's model *m of class cls: what gen's source is written
 * from. */
static se_neurons_t clamped_engine(se_neuron_model *m, const char *cls) {
  se_error err = {0};
  clamped_cell(m, cls);
  se_neurons_options opt = se_neurons_default_options();
  opt.interleave_width = 32;
  se_neurons_t e = NULL;
  se_test_ok(se_neurons_create(m, 0, 1, &opt, &e, &err), &err, "create");
  return e;
}

/* gen's second level of pieces (SE_GEN_WARP_LEVELS=2, and in the source the default): big-low
 * and big-high take it (the partition line of the source says so), medium-high does not (it
 * would save too few rows), and with one level none does; each plan within auto's shared
 * memory (the literal table's room comes on top of it, check_gen_literals). */
static void check_gen_levels(se_test_state *st) {
  static const char *const cls[3] = {"big-low", "big-high", "medium-high"};
  for (int k = 0; k < 3; k++) {
    se_error err = {0};
    se_neuron_model m;
    se_neurons_t e = clamped_engine(&m, cls[k]);
    for (int levels = -1; levels <= 2; levels++) {
      if (levels == 0)
        continue;
      se_gen_options go = se_gen_options_from_env();
      go.warp_levels = levels;
      char *src = NULL;
      se_test_ok(se_neurons_gen_source(e, &go, &src, &err), &err, "se_neurons_gen_source");
      const int two = strstr(src, "over 2 levels") != NULL;
      const size_t smem = se_neurons_gen_smem(e, 0, &go, NULL);
      SE_EXPECT(st, two == (levels != 1 && k < 2) && smem <= SE_GEN_AUTO_MAX_SMEM,
                "gen on %s with %d level(s) of pieces: 2 levels taken %d, %zu B of shared "
                "memory per block", cls[k], levels, two, smem);
      /* the rule weighs the rows by their cost above 512 rows (SE_GEN_COST_ROWS), so the big
       * classes' partition lines say so and medium-high's does not; with the rows counted
       * (SE_GEN_WARP_COST=0) none does, and big-low's partition is another (its 22 hh rows and
       * their ancestors divide) */
      go.warp_cost = 0;
      char *rsrc = NULL;
      se_test_ok(se_neurons_gen_source(e, &go, &rsrc, &err), &err, "se_neurons_gen_source");
      const char *line = strstr(src, "// morphology "), *rline = strstr(rsrc, "// morphology ");
      const char *end = line ? strstr(line, " per warp") : NULL; /* the counts, not the notes */
      const int same = end && rline && strncmp(line, rline, (size_t)(end - line)) == 0;
      const int weighted = strstr(src, "rows weighted by their cost") != NULL;
      SE_EXPECT(st, weighted == (k < 2) && !strstr(rsrc, "rows weighted by their cost") &&
                        (k == 0 ? !same : 1),
                "gen on %s with %d level(s): rows weighted %d, the partition with rows counted "
                "%s", cls[k], levels, weighted, same ? "the same" : "another");
      free(rsrc);
      free(src);
    }
    se_neurons_destroy(e);
    se_neuron_model_free(&m);
  }
}

/* The occurrences of needle in s. */
static int occurrences(const char *s, const char *needle) {
  int count = 0;
  for (const char *p = s; p && (p = strstr(p, needle)); p++)
    count++;
  return count;
}

/* 1 when gen's source src compiles for sm_90 (else err says why). */
static int compiles_for_sm90(const char *src, se_error *err) {
  char *cubin = NULL;
  size_t size = 0;
  const int ok = se_neurons_gen_compile(src, 9, 0, 0, &cubin, &size, err) == SE_OK;
  free(cubin);
  return ok;
}

/* gen's prefetches (SE_GEN_PREFETCH=4) on medium-high (4 warps, hh rows split off, not folded
 * so that every row loads v): each warp prefetches v of every row it eliminates but its first,
 * once, and rhs and diag of each such hh row; none without the option; the source compiles for
 * sm_90. */
static void check_gen_prefetch(se_test_state *st) {
  se_error err = {0};
  se_neuron_model m;
  se_neurons_t e = clamped_engine(&m, "medium-high");
  for (int prefetch = 0; prefetch <= 4; prefetch += 4) {
    se_gen_options go = se_gen_options_from_env();
    go.prefetch = prefetch;
    go.hh_fold = 0;
    char *src = NULL;
    se_test_ok(se_neurons_gen_source(e, &go, &src, &err), &err, "se_neurons_gen_source");
    const int v = occurrences(src, "SE_GEN_PREFETCH(V + "),
              r = occurrences(src, "SE_GEN_PREFETCH(R + "),
              d = occurrences(src, "SE_GEN_PREFETCH(D + ");
    const int rows = (int)(m.morph_offsets[1] - m.morph_offsets[0]),
              warps = se_neurons_gen_warps(e, 0, &go);
    const int compiled = compiles_for_sm90(src, &err);
    SE_EXPECT(st, compiled && (prefetch ? v == rows - warps && r == d && r > 0 : v + r + d == 0),
              "gen's prefetch %d on medium-high (%d rows, %d warps): %d of v, %d of rhs, %d of "
              "diag, compiled %d (%s)", prefetch, rows, warps, v, r, d, compiled,
              compiled ? "" : err.message);
    free(src);
  }
  se_neurons_destroy(e);
  se_neuron_model_free(&m);
}

/* gen's fold (SE_GEN_HH_FOLD) on medium-low (4 warps, 23 hh rows split off, the soma clamped):
 * the currents kernel writes the whole right-hand side of each hh row but the root (the soma),
 * so the step kernel loads v of 22 rows fewer and takes their b from rhs as it is; without the
 * option every row's v is loaded; both sources compile for sm_90. */
static void check_gen_fold(se_test_state *st) {
  se_error err = {0};
  se_neuron_model m;
  se_neurons_t e = clamped_engine(&m, "medium-low");
  const int rows = (int)(m.morph_offsets[1] - m.morph_offsets[0]);
  int n_hh = 0;
  for (int i = 0; i < rows; i++)
    n_hh += e->topology[0].has_hh[i] != 0;
  for (int fold = 0; fold <= 1; fold++) {
    se_gen_options go = se_gen_options_from_env();
    go.hh_fold = fold;
    char *src = NULL;
    se_test_ok(se_neurons_gen_source(e, &go, &src, &err), &err, "se_neurons_gen_source");
    const int loads = occurrences(src, " = V["), taken = occurrences(src, " = R[");
    const int compiled = compiles_for_sm90(src, &err);
    const int folded = fold ? n_hh - 1 : 0;
    SE_EXPECT(st, compiled && n_hh > 1 && loads == rows - folded && taken == folded &&
                      (strstr(src, "se_gen_fold_0[") != NULL) == fold,
              "gen's fold %d on medium-low (%d rows, %d hh): %d loads of v, %d right-hand sides "
              "taken from rhs, compiled %d (%s)", fold, rows, n_hh, loads, taken, compiled,
              compiled ? "" : err.message);
    free(src);
  }
  se_neurons_destroy(e);
  se_neuron_model_free(&m);
}

/* The rows whose y gen's source takes straight from b ("yN = bN;", SE_GEN_SCALED: 1 / d'
 * folded into the row's literals). */
static int scaled_rows(const char *src) {
  int count = 0;
  for (const char *p = src; (p = strstr(p, " = b")) != NULL; p++) {
    const char *q = p + 4;
    while (*q >= '0' && *q <= '9')
      q++;
    count += q > p + 4 && *q == ';';
  }
  return count;
}

/* gen's scaled rows (SE_GEN_SCALED) on a clamped medium-low: without it no row takes its y from
 * b alone; with it every passive row with a constant d' but the clamped ones does, each with one
 * multiplication by a literal fewer, and the source compiles. That the scaled literals are
 * right, the host runs check against the CPU path. */
static void check_gen_scaled(se_test_state *st) {
  se_error err = {0};
  se_neuron_model m;
  se_neurons_t e = clamped_engine(&m, "medium-low");
  int scaled[2] = {0, 0}, products[2] = {0, 0}, compiled = 0;
  for (int k = 0; k <= 1; k++) {
    se_gen_options go = se_gen_options_from_env();
    go.scaled = k;
    char *src = NULL;
    se_test_ok(se_neurons_gen_source(e, &go, &src, &err), &err, "se_neurons_gen_source");
    scaled[k] = scaled_rows(src);
    products[k] = occurrences(src, " * (");
    if (k)
      compiled = compiles_for_sm90(src, &err);
    free(src);
  }
  const int rows = (int)(m.morph_offsets[1] - m.morph_offsets[0]);
  SE_EXPECT(st, scaled[0] == 0 && scaled[1] > rows / 2 && products[0] - products[1] == scaled[1] &&
                    compiled,
            "gen's scaled rows on medium-low (%d rows): %d and %d rows with y = b, %d and %d "
            "products with a literal, compiled %d (%s)", rows, scaled[0], scaled[1], products[0],
            products[1], compiled, compiled ? "" : err.message);
  printf("gen's scaled rows on medium-low: %d of %d rows, %d products with a literal fewer\n",
         scaled[1], rows, products[0] - products[1]);
  se_neurons_destroy(e);
  se_neuron_model_free(&m);
}

/* gen's literal tables (SE_GEN_LITERALS) on a clamped medium-low: without them no table and no
 * loads from one; with 1 (shared memory) a table se_gen_lit_0 of N > 0 entries that each block
 * copies (the copy's barrier 4), N * 8 B beside the plan's shared memory still within a quarter
 * of sm_90's 228 KiB per multiprocessor less 1 KiB per block (medium-low's plan runs 4 blocks per
 * multiprocessor); with 2 (global memory) a table the loads read in place (no copy, not const);
 * every load "sl[k]" within its table (k < N), and the sources compile for sm_90; by default a
 * table in shared memory for big-low and none for medium-low. That the entries are the right
 * values, the host runs check against the CPU path. */
static void check_gen_literals(se_test_state *st) {
  se_error err = {0};
  se_neuron_model m;
  se_neurons_t e = clamped_engine(&m, "medium-low");
  for (int mode = 0; mode <= 2; mode++) {
    se_gen_options go = se_gen_options_from_env();
    go.literals = mode;
    char *src = NULL;
    se_test_ok(se_neurons_gen_source(e, &go, &src, &err), &err, "se_neurons_gen_source");
    const char *table = strstr(src, "se_gen_lit_0[");
    const int n = table ? atoi(table + strlen("se_gen_lit_0[")) : 0;
    int loads = 0, outside = 0;
    for (const char *p = src; (p = strstr(p, "sl[")) != NULL; p += 3) {
      loads++;
      const int k = atoi(p + 3);
      outside += k < 0 || k >= n;
    }
    const int copied = strstr(src, "SE_GEN_BAR(4,") != NULL,
              constant = strstr(src, "__device__ const double se_gen_lit_0[") != NULL;
    /* the kernel's shared memory reserves its table's room after the plan's (mode 1 only) */
    size_t table_room = 0;
    const size_t smem = se_neurons_gen_smem(e, 0, &go, &table_room), kernel = smem + table_room,
                 total = smem + (size_t)n * 8 + 1024;
    const int compiled = mode == 0 || compiles_for_sm90(src, &err);
    const int reserved = mode == 1 ? total - 1024 <= kernel && kernel + 1024 <= go.sm_smem / 4
                                   : kernel == smem;
    const int ok = mode == 0 ? !table && loads == 0
                             : n > 0 && loads >= n && outside == 0 && copied == (mode == 1) &&
                                   constant == (mode == 1) &&
                                   (mode == 2 || total <= go.sm_smem / 4);
    SE_EXPECT(st, ok && reserved && compiled,
              "gen's literal table %d on medium-low: %d entries, %d loads, %d outside, copied %d, "
              "const %d, %zu B per block with the plan's %zu B (the kernel's %zu B), compiled %d "
              "(%s)", mode, n, loads, outside, copied, constant, total, smem, kernel, compiled,
              compiled ? "" : err.message);
    if (mode > 0)
      printf("gen's literal table %d on medium-low: %d entries, %d loads%s\n", mode, n, loads,
             mode == 1 ? ", in shared memory" : ", read from global memory");
    free(src);
  }
  se_neurons_destroy(e);
  se_neuron_model_free(&m);
  /* the default (-1): medium-low's 305 rows take their literals as immediates, big-low's 695
   * from a table in shared memory (above SE_GEN_LITERAL_ROWS = 512 rows) */
  static const char *const cls[2] = {"medium-low", "big-low"};
  for (int k = 0; k < 2; k++) {
    e = clamped_engine(&m, cls[k]);
    se_gen_options go = se_gen_options_from_env();
    go.literals = -1;
    char *src = NULL;
    se_test_ok(se_neurons_gen_source(e, &go, &src, &err), &err, "se_neurons_gen_source");
    const int shared = src && strstr(src, "__device__ const double se_gen_lit_0[") != NULL,
              any = src && strstr(src, "se_gen_lit_0[") != NULL;
    SE_EXPECT(st, any == (k == 1) && shared == (k == 1),
              "gen's default literals on %s: a table %d, in shared memory %d", cls[k], any,
              shared);
    if (k == 1) {
      /* the table's room follows the shared memory per multiprocessor (the device's at attach):
       * big-low's 8 warps run 2 blocks per multiprocessor, so sm_90's 228 KiB leave room beside
       * the plan's shared memory and sm_80's 164 KiB none (no table, the plan's alone) */
      se_gen_options sm80 = go;
      sm80.sm_smem = 167936;
      size_t room = 0, room80 = 0;
      const size_t smem = se_neurons_gen_smem(e, 0, &go, &room), kernel = smem + room,
                   kernel80 = se_neurons_gen_smem(e, 0, &sm80, &room80) + room80;
      SE_EXPECT(st, kernel > smem && kernel + 1024 <= go.sm_smem / 2 && kernel80 == smem,
                "gen's default literal table on big-low: %zu B per block with sm_90's shared "
                "memory, %zu B with sm_80's, the plan's %zu B", kernel, kernel80, smem);
    }
    free(src);
    se_neurons_destroy(e);
    se_neuron_model_free(&m);
  }
}

#ifdef SIMENGINE_HAVE_CUDA
/* On a GPU, the default rule's guard on the second level (se_neurons_gen_attach): big-low's and
 * big-high's sources take 2 levels (check_gen_levels); each attached kernel either keeps them
 * and uses at most SE_GEN_LEVEL_LOCAL bytes of local memory per thread (two_level_local), or
 * was planned again with one level because its two-level kernel used more. */
static void check_gen_level_guard(se_test_state *st) {
  static const char *const cls[2] = {"big-low", "big-high"};
  for (int k = 0; k < 2; k++) {
    se_error err = {0};
    se_neuron_model m;
    se_neurons_t e = clamped_engine(&m, cls[k]);
    se_neurons_device d;
    memset(&d, 0, sizeof d);
    se_gen_step g;
    memset(&g, 0, sizeof g);
    se_test_ok(se_neurons_gen_attach(e, 0, NULL, &d, &g, &err), &err, "se_neurons_gen_attach");
    struct cudaFuncAttributes a = {0};
    const cudaError_t cr = g.n == 1 ? cudaFuncGetAttributes(&a, (const void *)g.k[0].kernel)
                                    : cudaErrorInvalidValue;
    const int levels = g.n == 1 ? g.k[0].levels : -1;
    const size_t two = g.n == 1 ? g.k[0].two_level_local : 0;
    printf("gen's level guard on %s: %d level(s), local memory %zu B per thread (the two-level "
           "kernel's %zu B)\n", cls[k], levels, a.localSizeBytes, two);
    SE_EXPECT(st, cr == cudaSuccess &&
                      (levels == 2 ? a.localSizeBytes <= SE_GEN_LEVEL_LOCAL &&
                                         two == a.localSizeBytes
                                   : levels == 1 && two > SE_GEN_LEVEL_LOCAL),
              "gen's level guard on %s: %d level(s), %zu B of local memory, the two-level "
              "kernel's %zu B (%s)", cls[k], levels, a.localSizeBytes, two, cudaGetErrorString(cr));
    se_neurons_gen_free(&g);
    cudaFree((void *)d.stream);
    se_neurons_destroy(e);
    se_neuron_model_free(&m);
  }
}
#endif

static void check_gen_source(se_test_state *st, const se_neuron_model *mixed,
                             const se_neuron_model *mono, int n_mono) {
  se_error err = {0};
  se_neurons_options opt = se_neurons_default_options();
  opt.interleave_width = 32;
  se_neurons_t e = NULL;
  char why[256] = "";
  se_test_ok(se_neurons_create(mixed, 0, mixed->n_cells, &opt, &e, &err), &err, "create");
  SE_EXPECT(st, se_neurons_gen_applicable(e, why, sizeof why) && !se_neurons_gen_one_morphology(e),
            "several morphologies: gen not applicable (%s) or one morphology", why);
  char *msrc = NULL, *mcubin = NULL;
  size_t msize = 0;
  /* the hh rows in the step kernel in chunks of 4: more hh loops than kernels */
  const se_gen_options chunked = {.register_rows = -1, .window = 8, .hh_chunk = 4};
  int mrc = se_neurons_gen_source(e, &chunked, &msrc, &err);
  if (mrc == SE_OK)
    mrc = se_neurons_gen_compile(msrc, 9, 0, 0, &mcubin, &msize, &err);
  const int hh_loops = occurrences(msrc, "hh rows: currents");
  SE_EXPECT(st, mrc == SE_OK && msize > 0 && strstr(msrc, "se_gen_step_7(") && hh_loops > 8,
            "several morphologies: %s (%d hh loops)",
            mrc == SE_OK ? "no kernel of morphology 7" : err.message, hh_loops);
  free(msrc);
  free(mcubin);
  se_neurons_destroy(e);
  /* a morphology larger than the generator writes out: refused with the reason */
  se_morphology big = {0};
  uint64_t rng = 99;
  const int32_t pas[] = {3};
  random_tree(&big, SE_GEN_MAX_ROWS + 1, 0.5, pas, 1, &rng);
  se_neuron_model mb;
  one_cell_each(&mb, &big, 1);
  se_test_ok(se_neurons_create(&mb, 0, 1, &opt, &e, &err), &err, "create (big)");
  SE_EXPECT(st, !se_neurons_gen_applicable(e, why, sizeof why) && strstr(why, "1025"),
            "a morphology of %d compartments: applicable or no size in '%s'", SE_GEN_MAX_ROWS + 1,
            why);
  se_neurons_destroy(e);
  se_neuron_model_free(&mb);
  se_morphology_free(&big);
  /* more morphologies than it compiles kernels for: refused with the count */
  enum { MANY = SE_GEN_MAX_MORPHOLOGIES + 1 };
  se_morphology many[MANY];
  for (int k = 0; k < MANY; k++) {
    se_test_ok(se_morphology_synthetic("small-high", 1 + (uint64_t)k, &many[k], &err), &err,
               "small-high");
  }
  one_cell_each(&mb, many, MANY);
  se_test_ok(se_neurons_create(&mb, 0, MANY, &opt, &e, &err), &err, "create (many)");
  char count_text[16];
  snprintf(count_text, sizeof count_text, "%d morphologies", (int)MANY);
  SE_EXPECT(st, !se_neurons_gen_applicable(e, why, sizeof why) && strstr(why, count_text),
            "%d morphologies: applicable or no count in '%s'", (int)MANY, why);
  se_neurons_destroy(e);
  se_neuron_model_free(&mb);
  for (int k = 0; k < MANY; k++)
    se_morphology_free(&many[k]);
  for (int k = 0; k < n_mono; k++) {
    se_test_ok(se_neurons_create(&mono[k], 0, mono[k].n_cells, &opt, &e, &err), &err, "create");
    const int ok = se_neurons_gen_applicable(e, why, sizeof why);
    SE_EXPECT(st, ok, "morphology %d alone: gen not applicable: %s", k, why);
    const int reg_rows[3] = {0, SE_GEN_MAX_ROWS, -1};
    for (int q = 0; ok && q < 3; q++) {
      se_gen_options go = se_gen_options_from_env();
      go.register_rows = reg_rows[q];
      go.hh_split = q > 0; /* with all rows in registers, the hh rows split off where allowed */
      go.warps = q == 2 ? 8 : 1; /* then a warp per subtree, 8 per block, where allowed, with */
      go.warp_min_blocks = q == 2 ? 2 : 0; /* registers for 2 blocks per multiprocessor, and */
      go.warp_hh = q == 2;                 /* the hh rows computed by the warps, and */
      go.warp_reg_rows = q == 2 ? 3 : -1;  /* y in registers for 3 rows per warp, the rest in
                                              shared memory */
      char *src = NULL, *cubin = NULL;
      size_t size = 0;
      size_t room = 0;
      const size_t smem = se_neurons_gen_smem(e, e->groups[0].morphology, &go, &room) + room;
      int rc = se_neurons_gen_source(e, &go, &src, &err);
      if (rc == SE_OK)
        rc = se_neurons_gen_compile(src, 9, 0, 0, &cubin, &size, &err);
      SE_EXPECT(st, rc == SE_OK && size > 0, "morphology %d, %d register rows: %s", k,
                reg_rows[q], err.message);
      if (k == 0 && q == 0) {
        printf("gen: morphology 0 (%d rows): %zu B of source, %zu B of cubin, %zu B shared\n",
               e->groups[0].n_comp, src ? strlen(src) : 0, size, smem);
        if (rc == SE_OK)
          check_gen_cache(st, src);
      }
      free(src);
      free(cubin);
    }
    se_neurons_destroy(e);
  }
}
#endif

/* run_gpu_spiking on the mixed population: more than 2 spikes per cell. */
static void run_gpu(se_test_state *st, const se_neuron_model *m, int kernel, int width,
                    const char *rows, const char *acc, const char *ahead, const char *hints) {
  run_gpu_spiking(st, m, kernel, width, rows, acc, ahead, hints, 2);
}

#ifdef SIMENGINE_HAVE_CUDA
/* gen on one morphology alone: some morphologies fire once or twice per cell in 100 ms. */
static void run_gen(se_test_state *st, const se_neuron_model *m, int width) {
  run_gpu_spiking(st, m, SE_GPU_KERNEL_GEN, width, NULL, NULL, NULL, NULL, 1);
}
#endif

int main(void) {
  se_test_state st = {0};
  se_neuron_model m;
  build_model(&m, -1, 0, 1);
#ifdef SIMENGINE_HAVE_CUDA
  se_neuron_model mono[N_MORPH];
  for (int k = 0; k < N_MORPH; k++) /* gen: the clamps' current in registers (morphology 0), in
                                       the rows' rhs slots (the others) */
    build_model(&mono[k], k, 37, k > 0);
  se_neuron_model soma1; /* medium-high alone, 37 cells clamped at the soma */
  build_model(&soma1, 1, 37, 0);
  check_gen_source(&st, &m, mono, N_MORPH);
  check_gen_rule(&st);
  check_gen_levels(&st);
  check_gen_fold(&st);
  check_gen_scaled(&st);
  check_gen_literals(&st);
  check_gen_prefetch(&st);
  /* the host runs (CI's; tools/device/check.sh sets SE_TEST_GEN_HOST=0 to leave the GPU machine's
   * time to the GPU part) */
  const char *host_env = getenv("SE_TEST_GEN_HOST");
  const int host_runs = !host_env || strcmp(host_env, "0") != 0;
  for (int k = 0; host_runs && k < N_MORPH; k++) {
    char what[32];
    snprintf(what, sizeof what, "morphology %d alone", k);
    run_gen_host(&st, &mono[k], k % 2 ? 8 : 32, what, NULL, NULL);
  }
  if (host_runs) {
    run_gen_host(&st, &m, 32, "the 8 morphologies together", NULL, NULL);
    run_gen_host(&st, &m, 3, "the 8 morphologies together", NULL, NULL);
    /* the hh rows in the step kernel (SE_GEN_HH_SPLIT=0): all before the elimination, and 3 at a
     * time, each chunk before its first row's elimination (the last chunk of most morphologies
     * partial) */
    setenv("SE_GEN_HH_SPLIT", "0", 1);
    setenv("SE_GEN_WARPS", "1", 1); /* a thread per cell */
    SE_EXPECT(&st,
              run_gen_host(&st, &mono[0], 32, "morphology 0 alone, hh rows in the step", NULL,
                           NULL) == 0,
              "morphology 0: hh rows split off with SE_GEN_HH_SPLIT=0");
    setenv("SE_GEN_HH_CHUNK", "3", 1);
    run_gen_host(&st, &m, 32, "the 8 morphologies together, hh rows in chunks of 3", NULL, NULL);
    unsetenv("SE_GEN_HH_CHUNK");
    unsetenv("SE_GEN_HH_SPLIT");
    /* a thread per cell, the hh rows split off */
    SE_EXPECT(&st,
              run_gen_host(&st, &mono[0], 32, "morphology 0 alone, hh rows split off", NULL,
                           NULL) == 1,
              "morphology 0: hh rows not split off");
    unsetenv("SE_GEN_WARPS");
    /* by default a warp per subtree for all 8, the hh rows computed by the warps up to 128
     * rows, split off above (3 of the 8: 319, 200 and 150 rows, the y of each warp's rows before
     * its last 48 in shared memory), through the group tables; medium-high alone in cell order (37 cells: 27 lanes of the
     * second block past the cells) */
    se_neuron_model soma;
    build_model(&soma, -1, 0, 0);
    int warp_kernels = 0;
    uint64_t soma_hash = 0, big_hash = 0, folded_hash = 0;
    const int soma_split =
        run_gen_host(&st, &soma, 8, "the 8 clamped at the soma, defaults", &warp_kernels,
                     &soma_hash);
    SE_EXPECT(&st, soma_split == 3 && warp_kernels == N_MORPH,
              "%d of 3 morphologies with hh rows split off, %d of %d with a warp per subtree",
              soma_split, warp_kernels, N_MORPH);
    run_gen_host(&st, &soma1, 32, "medium-high alone clamped at the soma", &warp_kernels, NULL);
    SE_EXPECT(&st, warp_kernels == 1, "medium-high alone: no warp per subtree");
    /* a warp per subtree for every morphology (down to 1 compartment: the trunk alone), 3 and 16
     * warps per block, and both partitions */
    setenv("SE_GEN_WARPS", "3", 1);
    run_gen_host(&st, &soma, 8, "the 8 clamped at the soma, 3 warps each", &warp_kernels, NULL);
    SE_EXPECT(&st, warp_kernels == N_MORPH, "3 warps: %d of %d morphologies", warp_kernels,
              N_MORPH);
    setenv("SE_GEN_WARPS", "16", 1);
    run_gen_host(&st, &soma, 32, "the 8 clamped at the soma, 16 warps each", &warp_kernels, NULL);
    run_gen_host(&st, &soma1, 32, "medium-high alone, 16 warps", &warp_kernels, NULL);
    /* the partitions other than the default (SE_GEN_WARP_CUT: 0 the threshold n / K, 1 that of
     * the shortest critical path; by default 0 up to 128 rows, else 1) */
    setenv("SE_GEN_WARP_CUT", "0", 1);
    setenv("SE_GEN_WARP_MIN_BLOCKS", "2", 1); /* __launch_bounds__'s second value */
    run_gen_host(&st, &soma1, 32, "medium-high alone, 16 warps, cut 0", &warp_kernels, NULL);
    setenv("SE_GEN_WARP_CUT", "1", 1);
    unsetenv("SE_GEN_WARP_MIN_BLOCKS");
    setenv("SE_GEN_WARPS", "3", 1);
    run_gen_host(&st, &soma, 8, "the 8 clamped at the soma, 3 warps each, cut 1", &warp_kernels,
                 NULL);
    unsetenv("SE_GEN_WARP_CUT");
    /* the hh rows computed by the warps of the step kernel (SE_GEN_WARP_HH), their b and dg in
     * shared memory (1) or through the rhs and diag slots (2): no currents kernel */
    static const char *const hh_mode[2][2] = {{"1", "hh rows in the warps"},
                                              {"2", "hh rows in the warps through rhs"}};
    for (int q = 0; q < 2; q++) {
      char what[128];
      setenv("SE_GEN_WARP_HH", hh_mode[q][0], 1);
      setenv("SE_GEN_WARPS", "3", 1);
      snprintf(what, sizeof what, "the 8 clamped at the soma, 3 warps each, %s", hh_mode[q][1]);
      const int hh_split = run_gen_host(&st, &soma, 8, what, &warp_kernels, NULL);
      SE_EXPECT(&st, hh_split == 0 && warp_kernels == N_MORPH,
                "%s: %d currents kernels, %d warp kernels", hh_mode[q][1], hh_split,
                warp_kernels);
      unsetenv("SE_GEN_WARPS");
      snprintf(what, sizeof what, "medium-high alone, 4 warps, %s", hh_mode[q][1]);
      run_gen_host(&st, &soma1, 32, what, &warp_kernels, NULL);
    }
    unsetenv("SE_GEN_WARP_HH");
    /* each warp's y in registers for only the last 10 rows it eliminates, the rest in shared
     * memory (SE_GEN_WARP_REG_ROWS; by default 5 of the 8 compute their hh rows in the block,
     * whose slots come first); then none in registers, the trunk's too */
    setenv("SE_GEN_WARP_REG_ROWS", "10", 1);
    run_gen_host(&st, &soma, 8, "the 8 clamped at the soma, 10 rows per warp in registers",
                 &warp_kernels, NULL);
    SE_EXPECT(&st, warp_kernels == N_MORPH, "register rows: %d warp kernels", warp_kernels);
    setenv("SE_GEN_WARP_REG_ROWS", "0", 1);
    run_gen_host(&st, &soma1, 32, "medium-high alone, no row in registers", &warp_kernels, NULL);
    unsetenv("SE_GEN_WARP_REG_ROWS");
    /* a second level of pieces (SE_GEN_WARP_LEVELS=2), which big-low takes: level-0 pieces of
     * warp 0 under other warps' rows, level-1 pieces, slots both ways */
    se_neuron_model big;
    clamped_cell(&big, "big-low");
    setenv("SE_GEN_WARP_LEVELS", "2", 1);
    run_gen_host(&st, &big, 32, "big-low alone, 2 levels of pieces, rows weighted",
                 &warp_kernels, &big_hash);
    setenv("SE_GEN_WARP_COST", "0", 1); /* the rows counted, not weighted (another partition) */
    run_gen_host(&st, &big, 32, "big-low alone, 2 levels of pieces, rows counted",
                 &warp_kernels, NULL);
    unsetenv("SE_GEN_WARP_COST");
    unsetenv("SE_GEN_WARP_LEVELS");
    /* medium-low with the rows weighted at W = 2 and 34 rows per warp in registers: two levels
     * of pieces with the long sections' prefetches and split-off hh rows (session 21's candidate
     * for its rule, docs/gpu.md "Session 21" item 3) */
    se_neuron_model medium;
    se_neurons_t medium_e = clamped_engine(&medium, "medium-low");
    setenv("SE_GEN_WARP_COST", "2", 1);
    setenv("SE_GEN_WARP_REG_ROWS", "34", 1);
    {
      se_error err = {0};
      const se_gen_options go = se_gen_options_from_env();
      char *src = NULL;
      se_test_ok(se_neurons_gen_source(medium_e, &go, &src, &err), &err, "se_neurons_gen_source");
      const size_t smem = se_neurons_gen_smem(medium_e, 0, &go, NULL);
      /* 4 blocks of 128 threads per multiprocessor: the options' sm_smem (sm_90's without a
       * device), 1 KiB of it reserved per block */
      SE_EXPECT(&st, strstr(src, "over 2 levels") && smem + 1024 <= go.sm_smem / 4,
                "medium-low at W = 2, R = 34: 2 levels %d, %zu B of shared memory per block",
                strstr(src, "over 2 levels") != NULL, smem);
      free(src);
    }
    run_gen_host(&st, &medium, 32, "medium-low alone, W = 2, 34 rows per warp in registers",
                 &warp_kernels, NULL);
    unsetenv("SE_GEN_WARP_REG_ROWS");
    unsetenv("SE_GEN_WARP_COST");
    se_neurons_destroy(medium_e);
    se_neuron_model_free(&medium);
    /* the currents kernel folds a v + c into the split-off hh rows' b (SE_GEN_HH_FOLD, the
     * default since session 19), in the step kernel's order of operations: the 8 clamped at the
     * soma (3 of them split) and big-low (2 levels, the host's default) end bit for bit where
     * they do unfolded */
    setenv("SE_GEN_HH_FOLD", "0", 1);
    run_gen_host(&st, &soma, 8, "the 8 clamped at the soma, hh rows not folded", &warp_kernels,
                 &folded_hash);
    SE_EXPECT(&st, folded_hash == soma_hash, "the 8 clamped at the soma, hh rows not folded: "
              "state hash %016llx, folded %016llx", (unsigned long long)folded_hash,
              (unsigned long long)soma_hash);
    run_gen_host(&st, &big, 32, "big-low alone, hh rows not folded", &warp_kernels,
                 &folded_hash);
    SE_EXPECT(&st, folded_hash == big_hash, "big-low alone, hh rows not folded: state hash "
              "%016llx, folded %016llx", (unsigned long long)folded_hash,
              (unsigned long long)big_hash);
    unsetenv("SE_GEN_HH_FOLD");
    /* the passive rows' literals not scaled by 1 / d' (SE_GEN_SCALED=0; scaled is the default
     * since session 19): the same limits against the CPU path */
    setenv("SE_GEN_SCALED", "0", 1);
    run_gen_host(&st, &soma, 8, "the 8 clamped at the soma, rows not scaled", &warp_kernels,
                 NULL);
    run_gen_host(&st, &big, 32, "big-low alone, rows not scaled", &warp_kernels, NULL);
    unsetenv("SE_GEN_SCALED");
    /* the literals from a table in shared memory for every warps' kernel above 128 rows
     * (SE_GEN_LITERALS=1; by default only above 512 rows), as immediates (0), then from a table
     * in global memory (2): the same limits against the CPU path */
    setenv("SE_GEN_LITERALS", "1", 1);
    run_gen_host(&st, &soma, 8, "the 8 clamped at the soma, literals in shared memory",
                 &warp_kernels, NULL);
    setenv("SE_GEN_LITERALS", "0", 1);
    run_gen_host(&st, &big, 32, "big-low alone, literals as immediates", &warp_kernels, NULL);
    setenv("SE_GEN_LITERALS", "2", 1); /* read in place from global memory */
    run_gen_host(&st, &soma, 8, "the 8 clamped at the soma, literals from global memory",
                 &warp_kernels, NULL);
    run_gen_host(&st, &big, 32, "big-low alone, literals from global memory", &warp_kernels,
                 NULL);
    unsetenv("SE_GEN_LITERALS");
    se_neuron_model_free(&big);
    se_neuron_model_free(&soma);
  } else {
    printf("gen host runs skipped: SE_TEST_GEN_HOST=0\n");
  }
#endif
  check_tables(&st, &m);
  const config configs[] = {{.width = 8, .stack_rows = 100000, .onchip = 1},
                            {.width = 8},
                            {.width = 1, .stack_rows = 5, .onchip = 1},
                            {.width = 3, .stack_rows = 40},
                            {.width = 32, .stack_rows = 60, .onchip = 1},
                            {.width = 32, .onchip = 1},
                            {.width = 32, .coop = 4, .short_path = 1},
                            {.width = 3, .coop = 8, .cap_percent = 100},
                            {.width = 8, .coop = 2, .short_path = SE_COOP_SHORT_AUTO}};
  for (size_t k = 0; k < sizeof configs / sizeof configs[0]; k++)
    run_config(&st, &m, configs[k]);
  if (se_gpu_count() > 0) {
    const int F2 = SE_GPU_KERNEL_FUSED2, CO = SE_GPU_KERNEL_COOP;
    run_gpu(&st, &m, F2, 32, NULL, NULL, NULL, NULL);
    run_gpu(&st, &m, F2, 32, "0", NULL, "2", "1");
    run_gpu(&st, &m, F2, 8, "3", "rhs", "1", "0");
    run_gpu(&st, &m, F2, 1, "17", NULL, "2", "0");
    run_gpu(&st, &m, CO, 32, NULL, NULL, NULL, NULL); /* 8 threads per cell: 319 rows */
    run_gpu(&st, &m, CO, 3, NULL, NULL, NULL, NULL);  /* width 3: 8-byte v copies */
    setenv("SE_COOP_LANES", "4", 1);
    setenv("SE_COOP_SHORT", "1", 1); /* phase 1b's short path in every plan with PLAIN rows */
    run_gpu(&st, &m, CO, 32, NULL, NULL, NULL, NULL);
    unsetenv("SE_COOP_SHORT");
    setenv("SE_COOP_LANES", "2", 1);
    setenv("SE_COOP_CAP", "100", 1);
    run_gpu(&st, &m, CO, 1, NULL, NULL, NULL, NULL); /* 15 of a warp's 16 cells absent */
    unsetenv("SE_COOP_CAP");
    /* phases 0 and 3b's records staged in batches at 8 threads per cell, in register rings at 4
     * and 2, against their defaults above (neurons_coop_cuda.c) */
    setenv("SE_COOP_STAGE_SHORT", "1", 1);
    setenv("SE_COOP_LANES", "8", 1);
    run_gpu(&st, &m, CO, 32, NULL, NULL, NULL, NULL);
    run_gpu(&st, &m, CO, 3, NULL, NULL, NULL, NULL);
    setenv("SE_COOP_STAGE_SHORT", "0", 1);
    setenv("SE_COOP_LANES", "4", 1);
    run_gpu(&st, &m, CO, 32, NULL, NULL, NULL, NULL);
    setenv("SE_COOP_LANES", "2", 1);
    run_gpu(&st, &m, CO, 32, NULL, NULL, NULL, NULL);
    run_gpu(&st, &m, CO, 1, NULL, NULL, NULL, NULL);
    unsetenv("SE_COOP_STAGE_SHORT");
    unsetenv("SE_COOP_LANES");
#ifdef SIMENGINE_HAVE_CUDA
    /* gen: each morphology alone, widths 32 and 8 (the layout's stride), y in shared memory and
     * registers (FMA contraction and the scaled rows by default) */
    for (int k = 0; k < N_MORPH; k++) {
      run_gen(&st, &mono[k], 32);
      run_gen(&st, &mono[k], 8);
    }
    /* several morphologies: a kernel per morphology over its group table (by default the hh
     * rows split off, a warp per subtree for the 3 of more than 128 rows, a stream each) */
    run_gpu(&st, &m, SE_GPU_KERNEL_GEN, 32, NULL, NULL, NULL, NULL);
    run_gpu(&st, &m, SE_GPU_KERNEL_GEN, 3, NULL, NULL, NULL, NULL);
    /* the hh rows in the step kernel, in chunks, y in shared memory */
    setenv("SE_GEN_HH_SPLIT", "0", 1);
    setenv("SE_GEN_REG_ROWS", "0", 1);
    setenv("SE_GEN_WINDOW", "0", 1);
    setenv("SE_GEN_HH_CHUNK", "5", 1);
    run_gen(&st, &mono[2], 32);
    unsetenv("SE_GEN_HH_CHUNK");
    run_gpu(&st, &m, SE_GPU_KERNEL_GEN, 32, NULL, NULL, NULL, NULL);
    unsetenv("SE_GEN_HH_SPLIT");
    /* a warp per subtree: medium-high alone in cell order (4 warps; 37 cells), every morphology
     * with 3 and 16 warps; then the 8 morphologies' kernels on one stream (8 by default) */
    run_gen(&st, &soma1, 32);
    setenv("SE_GEN_WARPS", "3", 1);
    run_gpu(&st, &m, SE_GPU_KERNEL_GEN, 8, NULL, NULL, NULL, NULL);
    setenv("SE_GEN_WARPS", "16", 1);
    run_gpu(&st, &m, SE_GPU_KERNEL_GEN, 32, NULL, NULL, NULL, NULL);
    unsetenv("SE_GEN_WARPS");
    setenv("SE_GEN_WARP_CUT", "0", 1); /* the partitions other than the default (up to 128 */
    run_gpu(&st, &m, SE_GPU_KERNEL_GEN, 32, NULL, NULL, NULL, NULL); /* rows 0, else 1), */
    setenv("SE_GEN_WARP_CUT", "1", 1);        /* default warps, then registers */
    setenv("SE_GEN_WARP_MIN_BLOCKS", "2", 1); /* for 2 blocks per multiprocessor */
    run_gpu(&st, &m, SE_GPU_KERNEL_GEN, 32, NULL, NULL, NULL, NULL);
    unsetenv("SE_GEN_WARP_MIN_BLOCKS");
    unsetenv("SE_GEN_WARP_CUT");
    setenv("SE_GEN_WARP_HH", "1", 1); /* the hh rows computed by the warps */
    run_gpu(&st, &m, SE_GPU_KERNEL_GEN, 8, NULL, NULL, NULL, NULL);
    run_gen(&st, &soma1, 32);
    setenv("SE_GEN_WARP_HH", "2", 1); /* their b and dg through rhs and diag */
    run_gpu(&st, &m, SE_GPU_KERNEL_GEN, 32, NULL, NULL, NULL, NULL);
    unsetenv("SE_GEN_WARP_HH");
    setenv("SE_GEN_WARP_REG_ROWS", "24", 1); /* y in registers for 24 rows per warp */
    run_gpu(&st, &m, SE_GPU_KERNEL_GEN, 32, NULL, NULL, NULL, NULL);
    run_gen(&st, &soma1, 32);
    unsetenv("SE_GEN_WARP_REG_ROWS");
    /* a second level of pieces forced (whether the default takes it for big-low depends on
     * its kernel's spills, check_gen_level_guard), rows weighted by their cost (the default
     * above 512 rows): its one cell fires once in 100 ms, so any spike count above 0 passes,
     * all of them matched */
    se_neuron_model big;
    clamped_cell(&big, "big-low");
    setenv("SE_GEN_WARP_LEVELS", "2", 1);
    run_gpu_spiking(&st, &big, SE_GPU_KERNEL_GEN, 32, NULL, NULL, NULL, NULL, 0);
    setenv("SE_GEN_WARP_COST", "0", 1); /* and the rows counted */
    run_gpu_spiking(&st, &big, SE_GPU_KERNEL_GEN, 32, NULL, NULL, NULL, NULL, 0);
    unsetenv("SE_GEN_WARP_COST");
    unsetenv("SE_GEN_WARP_LEVELS");
    se_neuron_model_free(&big);
    check_gen_level_guard(&st);
    setenv("SE_GEN_PREFETCH", "8", 1); /* prefetches 8 rows ahead into L1, then L2 */
    run_gpu(&st, &m, SE_GPU_KERNEL_GEN, 32, NULL, NULL, NULL, NULL);
    setenv("SE_GEN_PREFETCH_LEVEL", "2", 1);
    run_gen(&st, &soma1, 32);
    unsetenv("SE_GEN_PREFETCH_LEVEL");
    unsetenv("SE_GEN_PREFETCH");
    setenv("SE_GEN_HH_FOLD", "0", 1); /* the step kernels load v of the split-off hh rows */
    run_gpu(&st, &m, SE_GPU_KERNEL_GEN, 32, NULL, NULL, NULL, NULL);
    unsetenv("SE_GEN_HH_FOLD");
    setenv("SE_GEN_LITERALS", "1", 1); /* the literals from tables in shared memory */
    run_gpu(&st, &m, SE_GPU_KERNEL_GEN, 32, NULL, NULL, NULL, NULL);
    setenv("SE_GEN_LITERALS", "0", 1); /* as immediates (the big kernels' default is 1) */
    run_gpu(&st, &m, SE_GPU_KERNEL_GEN, 32, NULL, NULL, NULL, NULL);
    setenv("SE_GEN_LITERALS", "2", 1); /* from tables in global memory */
    run_gpu(&st, &m, SE_GPU_KERNEL_GEN, 32, NULL, NULL, NULL, NULL);
    unsetenv("SE_GEN_LITERALS");
    setenv("SE_GEN_STREAMS", "0", 1); /* the 8 morphologies' kernels on the step's stream */
    run_gpu(&st, &m, SE_GPU_KERNEL_GEN, 32, NULL, NULL, NULL, NULL);
    unsetenv("SE_GEN_STREAMS");
    setenv("SE_GEN_CARVEOUT", "80", 1); /* a preferred carveout: fewer blocks, more L1 */
    run_gpu(&st, &m, SE_GPU_KERNEL_GEN, 32, NULL, NULL, NULL, NULL);
    unsetenv("SE_GEN_CARVEOUT");
    setenv("SE_GEN_REG_ROWS", "100000", 1);
    setenv("SE_GEN_WINDOW", "3", 1);
    setenv("SE_GEN_FMAD", "0", 1); /* no FMA contraction (the default since session 19) */
    setenv("SE_GEN_SCALED", "0", 1);
    run_gen(&st, &mono[0], 32);
    unsetenv("SE_GEN_REG_ROWS");
    unsetenv("SE_GEN_WINDOW");
    unsetenv("SE_GEN_FMAD");
    unsetenv("SE_GEN_SCALED");
#endif
  } else {
    printf("GPU part skipped: no GPU\n");
  }
  se_neuron_model_free(&m);
#ifdef SIMENGINE_HAVE_CUDA
  for (int k = 0; k < N_MORPH; k++)
    se_neuron_model_free(&mono[k]);
  se_neuron_model_free(&soma1);
#endif
  return se_test_finish(&st, "test_stream");
}
