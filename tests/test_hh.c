/* A Hodgkin-Huxley soma (one compartment, NEURON's hh defaults, 6.3 degC) under a current clamp
 * fires with the classic spike shape, and its spike times converge under dt refinement.
 *
 * Shape: peak between +30 and +50 mV (Na reversal 50 mV), after-hyperpolarisation between -80
 * and -70 mV (K reversal -77 mV), width at -20 mV between 0.5 and 2.5 ms, tonic firing under
 * 0.1 nA on 1000 um2 (10 uA/cm2): tonic firing near 67 Hz in the squid axon model.
 * Convergence: backward Euler + cnexp are first order, so the first spike time differences
 * between successive halvings of dt shrink by about 2 (checked between 1.5 and 2.6), and the
 * spike counts agree. docs/model.md records the numbers. */
#include <math.h>
#include <stdio.h>

#include "se_test.h"
#include "test_models.h"

#define AREA_SIDE 17.841241161527712 /* um: L = d gives area pi d L = 1000 um2 */

typedef struct hh_result {
  int spikes;
  double first, second, peak, trough, width;
} hh_result;

static int run_hh(double dt, hh_result *res) {
  se_neuron_model m;
  se_test_model_alloc(&m, 1, 1, 1, dt, 100.0);
  m.length[0] = m.diameter[0] = AREA_SIDE;
  m.bio.gnabar_hh[0] = 0.12;
  m.bio.gkbar_hh[0] = 0.036;
  m.bio.gl_hh[0] = 0.0003;
  se_test_model_add_iclamp(&m, 0, 0, 10.0, 80.0, 0.1);
  se_error err = {0};
  se_neurons_t e = NULL;
  if (se_neuron_model_validate(&m, "hh", &err) != SE_OK ||
      se_neurons_create(&m, 0, 1, NULL, &e, &err) != SE_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 1;
  }
  *res = (hh_result){.peak = -1e9, .trough = 1e9};
  double up = -1.0, vprev = -65.0;
  int64_t steps = se_neuron_model_steps(&m);
  for (int64_t s = 0; s < steps; s++) {
    if (se_neurons_step(e, &err) != SE_OK) {
      fprintf(stderr, "%s\n", err.message);
      return 1;
    }
    double t = se_neurons_time(e), v = se_neurons_voltage(e, 0, 0);
    int64_t n;
    const double *times;
    const int64_t *cells;
    if (se_neurons_take_spikes(e, &n, &times, &cells, &err) != SE_OK) {
      fprintf(stderr, "%s\n", err.message);
      return 1;
    }
    for (int64_t k = 0; k < n; k++) {
      if (res->spikes == 0)
        res->first = times[k];
      else if (res->spikes == 1)
        res->second = times[k];
      res->spikes++;
    }
    /* shape of the first spike (from its upstroke): peak, width at -20 mV, trough before the second */
    if (res->spikes < 2) {
      if (v > res->peak)
        res->peak = v;
      if (vprev < -20.0 && v >= -20.0)
        up = t - dt * (v + 20.0) / (v - vprev);
      if (vprev >= -20.0 && v < -20.0 && up > 0.0 && res->width == 0.0)
        res->width = t - dt * (v + 20.0) / (v - vprev) - up;
      if (res->width > 0.0 && v < res->trough)
        res->trough = v;
    }
    vprev = v;
  }
  se_neurons_destroy(e);
  se_neuron_model_free(&m);
  return 0;
}

int main(void) {
  se_test_state st = {0};
  const double dts[] = {0.025, 0.0125, 0.00625, 0.003125};
  hh_result r[4];
  for (int k = 0; k < 4; k++) {
    if (run_hh(dts[k], &r[k]))
      return 1;
    printf("dt %.6f ms: %d spikes, first %.5f ms, second %.5f ms, peak %.3f mV, AHP %.3f mV, "
           "width %.4f ms\n",
           dts[k], r[k].spikes, r[k].first, r[k].second, r[k].peak, r[k].trough, r[k].width);
  }
  hh_result *f = &r[3];
  SE_EXPECT(&st, f->spikes >= 4, "tonic firing expected, got %d spikes", f->spikes);
  SE_EXPECT(&st, f->peak > 30.0 && f->peak < 50.0, "peak %.3f mV", f->peak);
  SE_EXPECT(&st, f->trough > -80.0 && f->trough < -70.0, "AHP %.3f mV", f->trough);
  SE_EXPECT(&st, f->width > 0.5 && f->width < 2.5, "width %.4f ms", f->width);
  SE_EXPECT(&st, f->first > 10.0 && f->first < 15.0, "first spike at %.4f ms", f->first);
  for (int k = 1; k < 4; k++)
    SE_EXPECT(&st, r[k].spikes == f->spikes, "spike count %d at dt %g vs %d", r[k].spikes,
              dts[k], f->spikes);
  for (int k = 0; k < 2; k++) {
    double d0 = fabs(r[k].first - r[k + 1].first), d1 = fabs(r[k + 1].first - r[k + 2].first);
    double ratio = d0 / d1;
    printf("first spike: |t(%g) - t(%g)| = %.3e ms, ratio to the next halving %.3f\n", dts[k],
           dts[k + 1], d0, ratio);
    SE_EXPECT(&st, ratio > 1.5 && ratio < 2.6, "first-order convergence ratio %.3f", ratio);
  }
  SE_EXPECT(&st, fabs(r[0].first - f->first) < 0.1, "dt 0.025 first spike off by %.3e ms",
            fabs(r[0].first - f->first));
  return se_test_finish(&st, "test_hh");
}
