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

/* hh.mod's temperature factor q10 = 3^((celsius - 6.3)/10). */
SE_HD static inline double se_hh_q10(double celsius) { return pow(3.0, (celsius - 6.3) / 10.0); }

/* Steady states and rates (1/tau in 1/ms, temperature factor included) of the m, h and n gates
 * at voltage v. hh.mod's tau = 1/(q10 (alpha + beta)) is kept as its inverse so that the cnexp
 * update multiplies by it (the GPU's hh rows are bound by FP64 work; docs/gpu.md "Session 10").
 * hh.mod's six exponentials are two here (session 17; session 11 had three): with
 * E = exp(-(v+40)/10) and G = exp(-(v+65)/720), exp(-(v+35)/10) = E e^0.5,
 * exp(-(v+55)/10) = E e^-1.5, exp(-(v+65)/80) = G^9, exp(-(v+65)/20) = G^36 and
 * exp(-(v+65)/18) = G^40 (products of squares: at most about 40 ulp, 1e-14 relative, against
 * hh.mod's 1e-13 tolerance in tests/test_hh_forms.c; E stays an exponential of its own because
 * vtrap's exp(r) - 1 cancels next to v = -40 and -55 mV). Each gate takes one division instead
 * of two (se_hh_gate). Finite from -4500 mV up (below, s den in se_hh_gate overflows; hh.mod's
 * literal form: -12 800 mV; a membrane that far out has blown up). */
typedef struct se_hh_rates {
  double minf, mrate, hinf, hrate, ninf, nrate;
} se_hh_rates;

/* exp(0.5) and exp(-1.5), rounded to double. */
#define SE_HH_EXP_HALF 1.6487212707001282
#define SE_HH_EXP_MINUS_1_5 0.22313016014842982

/* A gate whose alpha = p/den and beta = q/den: sum = alpha + beta = s/den with s = p + q, so
 * xinf = alpha/sum = p/s and rate = q10 sum = q10 s/den, both from the one division 1/(s den). */
SE_HD static inline void se_hh_gate(double p, double q, double den, double q10, double *inf,
                                    double *rate) {
  const double s = p + q;
  const double inv = 1.0 / (s * den);
  *inf = p * (den * inv);
  *rate = q10 * s * (s * inv);
}

SE_HD static inline se_hh_rates se_hh_rates_at(double v, double q10) {
  se_hh_rates r;
  const double u = v + 65.0;
  const double r40 = (v + 40.0) * -0.1, r55 = (v + 55.0) * -0.1;
  const double e40 = exp(r40), g = exp(u * (-1.0 / 720.0));
  const double g2 = g * g, g4 = g2 * g2, g8 = g4 * g4, g16 = g8 * g8, g32 = g16 * g16;
  /* m: alpha = 0.1 vtrap(-(v+40), 10) = p/den, beta = 4 G^40 */
  double p = -(v + 40.0) * 0.1, den = e40 - 1.0;
  if (fabs(r40) < 1e-6) {
    p = 1.0 - 0.5 * r40;
    den = 1.0;
  }
  se_hh_gate(p, 4.0 * (g32 * g8) * den, den, q10, &r.minf, &r.mrate);
  /* h: alpha = 0.07 G^36, beta = 1/(E e^0.5 + 1) */
  den = e40 * SE_HH_EXP_HALF + 1.0;
  se_hh_gate(0.07 * (g32 * g4) * den, 1.0, den, q10, &r.hinf, &r.hrate);
  /* n: alpha = 0.01 vtrap(-(v+55), 10) = p/den, beta = 0.125 G^9 */
  p = -(v + 55.0) * 0.01;
  den = e40 * SE_HH_EXP_MINUS_1_5 - 1.0;
  if (fabs(r55) < 1e-6) {
    p = 0.1 * (1.0 - 0.5 * r55);
    den = 1.0;
  }
  se_hh_gate(p, 0.125 * (g8 * g) * den, den, q10, &r.ninf, &r.nrate);
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
