/* NEURON's hh.mod (Hodgkin-Huxley squid axon) rate functions, exact (no rate tables).
 * Units: v mV, rates 1/ms, celsius degC. */
#ifndef SE_HH_H
#define SE_HH_H

#include <math.h>

/* Functions compiled for the host and, in .cu files, for the device too. */
#ifdef __CUDACC__
#define SE_HD __host__ __device__
#else
#define SE_HD
#endif

/* x / (exp(x/y) - 1) with its limit y (1 - x/y/2) near x = 0, as hh.mod's vtrap; the caller
 * passes r = x/y and exp_r = exp(r) (the rates below share their exponentials). */
SE_HD static inline double se_hh_vtrap(double x, double y, double r, double exp_r) {
  return fabs(r) < 1e-6 ? y * (1.0 - 0.5 * r) : x / (exp_r - 1.0);
}

/* hh.mod's temperature factor q10 = 3^((celsius - 6.3)/10). */
SE_HD static inline double se_hh_q10(double celsius) { return pow(3.0, (celsius - 6.3) / 10.0); }

/* Steady states and rates (1/tau in 1/ms, temperature factor included) of the m, h and n gates
 * at voltage v. hh.mod's tau = 1/(q10 (alpha + beta)) is kept as its inverse so that the cnexp
 * update multiplies by it: the same quantities with 6 divisions per compartment instead of 18
 * (the GPU's hh rows are bound by FP64 work; docs/gpu.md "Session 10"). hh.mod's six
 * exponentials are three here: with E = exp(-(v+40)/10) and F = exp(-(v+65)/80),
 * exp(-(v+35)/10) = E e^0.5, exp(-(v+55)/10) = E e^-1.5 and exp(-(v+65)/20) = F^4 (session 11;
 * tests/test_hh_forms.c checks them against hh.mod's form). */
typedef struct se_hh_rates {
  double minf, mrate, hinf, hrate, ninf, nrate;
} se_hh_rates;

/* exp(0.5) and exp(-1.5), rounded to double. */
#define SE_HH_EXP_HALF 1.6487212707001282
#define SE_HH_EXP_MINUS_1_5 0.22313016014842982

SE_HD static inline se_hh_rates se_hh_rates_at(double v, double q10) {
  se_hh_rates r;
  const double u = v + 65.0;
  const double r40 = (v + 40.0) * -0.1, r55 = (v + 55.0) * -0.1;
  const double e40 = exp(r40), f = exp(u * -0.0125), f2 = f * f;
  double alpha = 0.1 * se_hh_vtrap(-(v + 40.0), 10.0, r40, e40);
  double beta = 4.0 * exp(u * (-1.0 / 18.0));
  double sum = alpha + beta;
  r.mrate = q10 * sum;
  r.minf = alpha / sum;
  alpha = 0.07 * (f2 * f2);
  beta = 1.0 / (e40 * SE_HH_EXP_HALF + 1.0);
  sum = alpha + beta;
  r.hrate = q10 * sum;
  r.hinf = alpha / sum;
  alpha = 0.01 * se_hh_vtrap(-(v + 55.0), 10.0, r55, e40 * SE_HH_EXP_MINUS_1_5);
  beta = 0.125 * f;
  sum = alpha + beta;
  r.nrate = q10 * sum;
  r.ninf = alpha / sum;
  return r;
}

/* cnexp (exponential Euler) update of one gate over dt: x += (1 - exp(-dt/tau)) (xinf - x), with
 * rate = 1/tau. */
SE_HD static inline double se_hh_cnexp(double x, double xinf, double rate, double dt) {
  return x + (1.0 - exp(-dt * rate)) * (xinf - x);
}

/* The cnexp update of the three gates over dt at the voltage v (rates at v, temperature factor
 * q10). */
SE_HD static inline void se_hh_advance_gates(double v, double q10, double dt, double *m, double *h,
                                             double *n) {
  const se_hh_rates r = se_hh_rates_at(v, q10);
  *m = se_hh_cnexp(*m, r.minf, r.mrate, dt);
  *h = se_hh_cnexp(*h, r.hinf, r.hrate, dt);
  *n = se_hh_cnexp(*n, r.ninf, r.nrate, dt);
}

/* hh at a row: with update, the deferred cnexp update of the gates at v (the v^{n} the previous
 * step produced), then the conductances gna = gnabar m^3 h, gk = gkbar n^4: adds their
 * e-terms to *b and their sum to *dg. */
SE_HD static inline void se_hh_row_terms(double v, double *m, double *h, double *n, int update,
                                         double dt, double q10, double gnabar, double gkbar,
                                         double ena, double ek, double *b, double *dg) {
  if (update) {
    se_hh_advance_gates(v, q10, dt, m, h, n);
  }
  const double mm = *m, nn = *n;
  const double gna = gnabar * mm * mm * mm * *h;
  const double gk = gkbar * nn * nn * nn * nn;
  *b += gna * ena + gk * ek;
  *dg = gna + gk;
}

#endif
