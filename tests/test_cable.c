/* Passive cable against the analytic solution (the rallpack1 setting): a sealed-end cylinder of
 * diameter 1 um and length 1 mm, Rm = 40000 ohm cm2 (g_pas 2.5e-5 S/cm2), cm = 1 uF/cm2,
 * Ra = 100 ohm cm, 0.1 nA injected at x = 0 from t = 0, 250 ms.
 *
 * Analytic solution (X = x/lambda, T = t/tau, L = l/lambda, q = I r_a lambda, k_n = n pi / L):
 *   V(X,T) = q cosh(L - X) / sinh(L) - q/L e^{-T} - sum_{n>=1} 2q/(L(1+k_n^2)) e^{-(1+k_n^2)T} cos(k_n X)
 * (the steady state minus the decaying modes of the sealed cable), evaluated at the centres of
 * the first and last compartments where the compartment model places its nodes.
 *
 * Error measure: the RMS over the sampled times of (V - V_analytic), divided by the peak of
 * |V_analytic| at that position (the deflection from rest, so the -65 mV offset does not dilute
 * the error). Requirement: < 0.1% at both ends once converged in compartment count and dt; the
 * test also checks that the error falls under refinement (a coarse run is worse). */
#include <math.h>
#include <stdio.h>

#include "se_test.h"
#include "test_models.h"

#define CABLE_LENGTH_UM 1000.0
#define CABLE_DIAM_UM 1.0
#define RM 40000.0 /* ohm cm2 */
#define CM 1.0     /* uF/cm2 */
#define RA 100.0   /* ohm cm */
#define I_NA 0.1
#define TSTOP 250.0

/* Analytic deflection (mV) at x um, t ms. */
static double cable_analytic(double x_um, double t_ms) {
  double d_cm = CABLE_DIAM_UM * 1e-4;
  double lambda_um = sqrt(RM * d_cm / (4.0 * RA)) * 1e4;
  double tau = RM * CM * 1e-3;                          /* ms */
  double r_a = 4.0 * RA / (M_PI * d_cm * d_cm);         /* ohm / cm */
  double q = I_NA * 1e-9 * r_a * (lambda_um * 1e-4) * 1e3; /* mV */
  double L = CABLE_LENGTH_UM / lambda_um, X = x_um / lambda_um, T = t_ms / tau;
  double v = q * cosh(L - X) / sinh(L) - q / L * exp(-T);
  for (int n = 1; n < 1000000; n++) {
    double k = n * M_PI / L, decay = exp(-(1.0 + k * k) * T);
    if (decay < 1e-18)
      break;
    v -= 2.0 * q / (L * (1.0 + k * k)) * decay * cos(k * X);
  }
  return v;
}

/* Runs the cable with n compartments and step dt; returns the error at both ends. */
static int run_cable(int32_t n, double dt, double err_out[2]) {
  se_neuron_model m;
  se_test_model_alloc(&m, n, 1, 1, dt, TSTOP);
  double dx = CABLE_LENGTH_UM / n;
  for (int32_t i = 0; i < n; i++) {
    m.parent[i] = i - 1;
    m.length[i] = dx;
    m.diameter[i] = CABLE_DIAM_UM;
  }
  m.bio.cm[0] = CM;
  m.bio.ra[0] = RA;
  m.bio.g_pas[0] = 1.0 / RM;
  m.bio.e_pas[0] = -65.0;
  m.v_init = -65.0;
  se_test_model_add_iclamp(&m, 0, 0, 0.0, 1e9, I_NA);
  se_error err = {0};
  if (se_neuron_model_validate(&m, "cable", &err) != SE_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 1;
  }
  se_neurons_t e = NULL;
  if (se_neurons_create(&m, 0, 1, NULL, &e, &err) != SE_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 1;
  }
  int64_t steps = se_neuron_model_steps(&m);
  int64_t every = (int64_t)llround(0.1 / dt); /* sample every 0.1 ms */
  if (every < 1)
    every = 1;
  double sq[2] = {0, 0}, peak[2] = {0, 0};
  int64_t samples = 0;
  const int32_t comp[2] = {0, n - 1};
  const double x[2] = {0.5 * dx, CABLE_LENGTH_UM - 0.5 * dx};
  for (int64_t s = 1; s <= steps; s++) {
    if (se_neurons_step(e, &err) != SE_OK) {
      fprintf(stderr, "%s\n", err.message);
      return 1;
    }
    if (s % every)
      continue;
    samples++;
    for (int k = 0; k < 2; k++) {
      double va = cable_analytic(x[k], se_neurons_time(e));
      double v = se_neurons_voltage(e, 0, comp[k]) + 65.0;
      sq[k] += (v - va) * (v - va);
      if (fabs(va) > peak[k])
        peak[k] = fabs(va);
    }
  }
  for (int k = 0; k < 2; k++)
    err_out[k] = sqrt(sq[k] / (double)samples) / peak[k];
  se_neurons_destroy(e);
  se_neuron_model_free(&m);
  return 0;
}

int main(void) {
  se_test_state st = {0};
  double coarse[2], fine[2];
  if (run_cable(50, 0.1, coarse) || run_cable(1000, 0.005, fine))
    return 1;
  printf("cable: 50 compartments, dt 0.1 ms:    RMS relative error x=0 %.3e, x=l %.3e\n",
         coarse[0], coarse[1]);
  printf("cable: 1000 compartments, dt 0.005 ms: RMS relative error x=0 %.3e, x=l %.3e\n",
         fine[0], fine[1]);
  SE_EXPECT(&st, fine[0] < 1e-3, "error at x = 0: %.3e", fine[0]);
  SE_EXPECT(&st, fine[1] < 1e-3, "error at x = l: %.3e", fine[1]);
  SE_EXPECT(&st, fine[0] < coarse[0] && fine[1] < coarse[1],
            "refinement did not reduce the error (%.3e %.3e vs %.3e %.3e)", fine[0], fine[1],
            coarse[0], coarse[1]);
  return se_test_finish(&st, "test_cable");
}
