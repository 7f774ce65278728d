/* The per-compartment arithmetic of one time step, shared by the CPU backend (neurons_cpu.c) and
 * the CUDA backend (cuda/neurons_kernels.cu) so that both evaluate the same expressions in the
 * same order (docs/model.md). */
#ifndef SE_NEURONS_MATH_H
#define SE_NEURONS_MATH_H

#include "hh.h"

/* Diagonal and right-hand side of a compartment's row before axial coupling:
 * diag = C/dt + sum of axial conductances + di/dv, rhs = -i_ion. */
typedef struct se_row {
  double diag, rhs;
} se_row;

/* Passive compartment: d_const = C/dt + d_axial. */
SE_HD static inline se_row se_row_pas(double v, double d_const, double g_pas, double e_pas) {
  se_row r;
  r.diag = d_const + g_pas;
  r.rhs = -(g_pas * (v - e_pas));
  return r;
}

/* Compartment with hh (and pas): conductances gna = gnabar m^3 h, gk = gkbar n^4. */
SE_HD static inline se_row se_row_hh(double v, double m, double h, double n, double d_const,
                                     double g_pas, double e_pas, double gnabar, double gkbar,
                                     double gl, double ena, double ek, double el) {
  const double gna = gnabar * m * m * m * h;
  const double gk = gkbar * n * n * n * n;
  const double current = g_pas * (v - e_pas) + gna * (v - ena) + gk * (v - ek) + gl * (v - el);
  se_row r;
  r.diag = d_const + (g_pas + gna + gk + gl);
  r.rhs = -current;
  return r;
}

/* A current clamp is on when delay <= t + dt/2 < delay + duration. */
SE_HD static inline int se_iclamp_on(double t_mid, double delay, double duration) {
  return delay <= t_mid && t_mid < delay + duration;
}

/* Linear interpolation of the threshold crossing within the step [t, t + dt]. */
SE_HD static inline double se_spike_time(double t, double dt, double threshold, double before,
                                         double after) {
  return t + dt * (threshold - before) / (after - before);
}

#endif
