/* Check of session 6, run 7 (docs/gpu-hines.md): the COOP host emulation with l_0 = NaN (row
 * 0's l is never used: the forward sweep zeroes row 0's h) against a CPU Hines sweep, FULL
 * layout, three random trees (76, 319, 695 rows), every lane and stage setting that fits; 2-norm
 * relative error per system <= 1e-12. The test's systems have l_0 = 0, so they cannot see a lost
 * CF_TOP zeroing. Not part of the build; from the repository root after building simengine_core:
 *   gcc -O1 -I include -I src -I cuda -I /usr/local/cuda/include \
 *     -I /usr/lib/x86_64-linux-gnu/openmpi/include docs/bench/gpu_hines_s6_run7_top_nan.c \
 *     build/src/libsimengine_core.a -L/usr/local/cuda/lib64 -lcudart -lstdc++ -lm \
 *     -L/usr/lib/x86_64-linux-gnu/openmpi/lib -lmpi -o /tmp/top_nan && SE_COOP_RUN7=31 /tmp/top_nan */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "hines_coop.h"
#include "se_error.h"
static double urand(unsigned *s) { *s = *s * 1103515245u + 12345u; return ((*s >> 8) & 0xffff) / 65536.0; }
int main(void) {
  int fails = 0, runs = 0;
  const int ns[3] = {76, 319, 695};
  for (int t = 0; t < 3; t++) {
    const int n = ns[t]; const long S = 37;
    int32_t *p = malloc(n * sizeof *p); unsigned seed = 7 + t;
    p[0] = -1;
    for (int i = 1; i < n; i++) { int lo = i - 1 - (int)(urand(&seed) * 6); p[i] = lo < 0 ? 0 : lo; }
    double *u = malloc(n * S * 8), *l = malloc(n * S * 8), *d = malloc(n * S * 8), *r = malloc(n * S * 8), *x = malloc(n * S * 8);
    for (int lanes = 2; lanes <= 16; lanes *= 2)
      for (int st = 2; st <= 8; st++) {
        if (st == 7) continue;
        for (long i = 0; i < n * S; i++) { u[i] = -0.1 - 0.9 * urand(&seed); l[i] = -0.1 - 0.9 * urand(&seed); d[i] = 8 + urand(&seed); r[i] = 2 * urand(&seed) - 1; }
        for (long s = 0; s < S; s++) l[s] = NAN; /* row 0 */
        /* reference */
        for (long s = 0; s < S; s++) {
          double dd[800], rr[800];
          for (int i = 0; i < n; i++) { dd[i] = d[i * S + s]; rr[i] = r[i * S + s]; }
          for (int i = n - 1; i >= 1; i--) { double f = u[i * S + s] / dd[i]; dd[p[i]] -= f * l[i * S + s]; rr[p[i]] -= f * rr[i]; }
          rr[0] /= dd[0];
          for (int i = 1; i < n; i++) { rr[i] -= l[i * S + s] * rr[p[i]]; rr[i] /= dd[i]; }
          for (int i = 0; i < n; i++) x[i * S + s] = rr[i];
        }
        se_hines_coop_config c = {lanes, st, 0, 0};
        se_error err = {0};
        int rc = se_hines_coop_emulate(p, n, S, SE_HINES_LAYOUT_FULL, 1, &c, u, l, d, r, NULL, &err);
        double worst = 0;
        for (long s = 0; s < S; s++) {
          double num = 0, den = 0;
          for (int i = 0; i < n; i++) { num += (r[i * S + s] - x[i * S + s]) * (r[i * S + s] - x[i * S + s]); den += x[i * S + s] * x[i * S + s]; }
          double e = sqrt(num / den); if (!(e <= worst)) worst = e;
        }
        runs++;
        if (rc == SE_ERR_UNSUPPORTED) { runs--; continue; }
        if (rc != SE_OK || !(worst <= 1e-12)) { fails++; if (fails < 5) printf("n %d L %d ST %d rc %d err %g %s\n", n, lanes, st, rc, worst, err.message); }
      }
  }
  printf("l_0 = NaN: %d solves, %d failed\n", runs, fails);
  return fails != 0;
}
