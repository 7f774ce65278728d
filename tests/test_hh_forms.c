/* src/hh.h's rates (reciprocal constants, rates kept as 1/tau, two exponentials, one division
 * per gate) against hh.mod's rate functions written literally (the reference below: NEURON's
 * hh.mod, one exp per term, tau = 1/(q10 (alpha + beta))), over -100..60 mV every 0.001 mV,
 * -1000..1000 mV every 0.1 mV and at the points next to vtrap's removable singularities (v = -40
 * and -55 mV); and that they stay finite from -4500 mV up.
 *
 * Tolerance: the two forms round differently, a few ulp per operation (2.2e-16 each) over about
 * 20 operations; 1e-13 relative. Next to vtrap's singularity x / (exp(x/y) - 1) loses
 * log10(1/|x/y|) digits in either form (exp(r) - 1 cancels), so there the bound is
 * 1e-15 / |r| (r = x/y, |r| >= 1e-6 outside vtrap's limit branch): at most 1e-9 relative at the
 * branch's edge. The gate update over dt = 0.025 ms is compared too (relative to the size of its
 * terms, |x0| + |xinf - x0|: x0 + step cancels where a gate falls towards 0), at q10(6.3 degC)
 * and q10(37 degC). */
#include <math.h>
#include <stdio.h>

#include "hh.h"
#include "se_test.h"

static double ref_vtrap(double x, double y) {
  double r = x / y;
  return fabs(r) < 1e-6 ? y * (1.0 - r / 2.0) : x / (exp(r) - 1.0);
}

/* hh.mod's rates: minf, 1/mtau, hinf, 1/htau, ninf, 1/ntau. */
static void ref_rates(double v, double q10, double out[6]) {
  double alpha = 0.1 * ref_vtrap(-(v + 40.0), 10.0);
  double beta = 4.0 * exp(-(v + 65.0) / 18.0);
  double sum = alpha + beta;
  out[0] = alpha / sum;
  out[1] = 1.0 / (1.0 / (q10 * sum));
  alpha = 0.07 * exp(-(v + 65.0) / 20.0);
  beta = 1.0 / (exp(-(v + 35.0) / 10.0) + 1.0);
  sum = alpha + beta;
  out[2] = alpha / sum;
  out[3] = 1.0 / (1.0 / (q10 * sum));
  alpha = 0.01 * ref_vtrap(-(v + 55.0), 10.0);
  beta = 0.125 * exp(-(v + 65.0) / 80.0);
  sum = alpha + beta;
  out[4] = alpha / sum;
  out[5] = 1.0 / (1.0 / (q10 * sum));
}

/* The allowed relative difference at v: 1e-13, or 1e-15 / |r| next to a vtrap singularity. */
static double tolerance(double v) {
  double tol = 1e-13;
  const double r_m = fabs(v + 40.0) / 10.0, r_n = fabs(v + 55.0) / 10.0;
  if (r_m >= 1e-6 && 1e-15 / r_m > tol)
    tol = 1e-15 / r_m;
  if (r_n >= 1e-6 && 1e-15 / r_n > tol)
    tol = 1e-15 / r_n;
  return tol;
}

static double rel(double a, double b) {
  return fabs(a - b) / fmax(fabs(b), 1e-300);
}

static void check_at(se_test_state *st, double v, double q10, double *worst) {
  double ref[6];
  ref_rates(v, q10, ref);
  const se_hh_rates r = se_hh_rates_at(v, q10);
  const double got[6] = {r.minf, r.mrate, r.hinf, r.hrate, r.ninf, r.nrate};
  const double tol = tolerance(v);
  for (int k = 0; k < 6; k++) {
    const double e = rel(got[k], ref[k]);
    if (e / tol > *worst)
      *worst = e / tol;
    SE_EXPECT(st, e <= tol, "v %.9f mV q10 %g quantity %d: %.17g vs hh.mod %.17g (rel %.2e > %.1e)",
              v, q10, k, got[k], ref[k], e, tol);
  }
  /* the gate update over one step from a state away from the steady state */
  const double dt = 0.025;
  double m = 0.3, h = 0.4, n = 0.5;
  se_hh_advance_gates(v, q10, dt, &m, &h, &n);
  const double x0[3] = {0.3, 0.4, 0.5}, got_x[3] = {m, h, n};
  for (int k = 0; k < 3; k++) {
    const double xr = x0[k] + (1.0 - exp(-dt / (1.0 / ref[2 * k + 1]))) * (ref[2 * k] - x0[k]);
    /* x0 + (step) cancels where the gate falls towards 0: relative to the terms' size */
    const double scale = fabs(x0[k]) + fabs(ref[2 * k] - x0[k]);
    const double e = fabs(got_x[k] - xr) / scale;
    SE_EXPECT(st, e <= tol, "v %.9f mV gate %d after dt: %.17g vs %.17g (%.2e of |x0| + |xinf - x0|)",
              v, k, got_x[k], xr, e);
  }
}

int main(void) {
  se_test_state st = {0};
  double worst = 0.0;
  const double q10s[2] = {se_hh_q10(6.3), se_hh_q10(37.0)};
  for (int q = 0; q < 2; q++) {
    for (int i = 0; i <= 160000; i++)
      check_at(&st, -100.0 + 0.001 * i, q10s[q], &worst);
    /* far out (a membrane driven far off by a strong clamp): -1000..1000 mV every 0.1 mV */
    for (int i = 0; i <= 20000; i++)
      check_at(&st, -1000.0 + 0.1 * i, q10s[q], &worst);
    /* next to the singularities: |r| from 1e-7 (limit branch) to 1e-2 on both sides */
    const double centres[2] = {-40.0, -55.0};
    for (int c = 0; c < 2; c++)
      for (double dv = 1e-6; dv <= 0.1; dv *= 1.7) {
        check_at(&st, centres[c] + dv, q10s[q], &worst);
        check_at(&st, centres[c] - dv, q10s[q], &worst);
      }
  }
  /* the rates stay finite from -4500 mV (hh.h's stated range) up */
  for (double v = -4500.0; v <= 20000.0; v += 0.5) {
    const se_hh_rates r = se_hh_rates_at(v, q10s[1]);
    const double got[6] = {r.minf, r.mrate, r.hinf, r.hrate, r.ninf, r.nrate};
    for (int k = 0; k < 6; k++)
      SE_EXPECT(&st, isfinite(got[k]), "v %.1f mV quantity %d: %g is not finite", v, k, got[k]);
  }
  printf("hh forms: %d checks, %d failures, worst difference %.3f of its tolerance\n", st.checks,
         st.failures, worst);
  return st.failures != 0;
}
