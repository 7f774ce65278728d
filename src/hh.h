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

/* x / (exp(x/y) - 1) with its limit y (1 - x/y/2) near x = 0, as hh.mod's vtrap. */
SE_HD static inline double se_hh_vtrap(double x, double y) {
  double r = x / y;
  return fabs(r) < 1e-6 ? y * (1.0 - r / 2.0) : x / (exp(r) - 1.0);
}

/* hh.mod's temperature factor q10 = 3^((celsius - 6.3)/10). */
SE_HD static inline double se_hh_q10(double celsius) { return pow(3.0, (celsius - 6.3) / 10.0); }

/* Steady states and time constants (ms) of the m, h and n gates at voltage v. */
typedef struct se_hh_rates {
  double minf, mtau, hinf, htau, ninf, ntau;
} se_hh_rates;

SE_HD static inline se_hh_rates se_hh_rates_at(double v, double q10) {
  se_hh_rates r;
  double alpha = 0.1 * se_hh_vtrap(-(v + 40.0), 10.0);
  double beta = 4.0 * exp(-(v + 65.0) / 18.0);
  double sum = alpha + beta;
  r.mtau = 1.0 / (q10 * sum);
  r.minf = alpha / sum;
  alpha = 0.07 * exp(-(v + 65.0) / 20.0);
  beta = 1.0 / (exp(-(v + 35.0) / 10.0) + 1.0);
  sum = alpha + beta;
  r.htau = 1.0 / (q10 * sum);
  r.hinf = alpha / sum;
  alpha = 0.01 * se_hh_vtrap(-(v + 55.0), 10.0);
  beta = 0.125 * exp(-(v + 65.0) / 80.0);
  sum = alpha + beta;
  r.ntau = 1.0 / (q10 * sum);
  r.ninf = alpha / sum;
  return r;
}

/* cnexp (exponential Euler) update of one gate over dt: x += (1 - exp(-dt/tau)) (xinf - x). */
SE_HD static inline double se_hh_cnexp(double x, double xinf, double tau, double dt) {
  return x + (1.0 - exp(-dt / tau)) * (xinf - x);
}

/* The cnexp update of the three gates over dt at the voltage v (rates at v, temperature factor
 * q10). */
SE_HD static inline void se_hh_advance_gates(double v, double q10, double dt, double *m, double *h,
                                             double *n) {
  const se_hh_rates r = se_hh_rates_at(v, q10);
  *m = se_hh_cnexp(*m, r.minf, r.mtau, dt);
  *h = se_hh_cnexp(*h, r.hinf, r.htau, dt);
  *n = se_hh_cnexp(*n, r.ninf, r.ntau, dt);
}

#endif
