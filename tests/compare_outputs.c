/* Compares two simengine outputs: the recorded voltages (largest absolute difference, mV), the
 * spike counts and the spike times (largest absolute difference, ms, after sorting both lists
 * by (gid, time)). Exits 1 when a difference exceeds its tolerance or the layouts differ.
 * Usage: compare_outputs A.h5 B.h5 VOLT_TOL_MV TIME_TOL_MS [population] */
#include <hdf5.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads a whole dataset as double (or uint64 when as_u64) into a new array; *n gets its size. */
static void *read_all(hid_t file, const char *path, int as_u64, hsize_t *n) {
  hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
  if (d < 0) {
    fprintf(stderr, "compare_outputs: cannot open %s\n", path);
    exit(1);
  }
  hid_t sp = H5Dget_space(d);
  hssize_t count = H5Sget_simple_extent_npoints(sp);
  *n = (hsize_t)count;
  void *buf = malloc((size_t)count * 8 + 8);
  if (!buf || H5Dread(d, as_u64 ? H5T_NATIVE_UINT64 : H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL,
                      H5P_DEFAULT, buf) < 0) {
    fprintf(stderr, "compare_outputs: cannot read %s\n", path);
    exit(1);
  }
  H5Sclose(sp);
  H5Dclose(d);
  return buf;
}

typedef struct spike {
  uint64_t gid;
  double t;
} spike;

static int by_gid_time(const void *a, const void *b) {
  const spike *x = a, *y = b;
  if (x->gid != y->gid)
    return x->gid < y->gid ? -1 : 1;
  return (x->t > y->t) - (x->t < y->t);
}

static spike *read_spikes(hid_t f, const char *pop, hsize_t *n) {
  char path[256];
  snprintf(path, sizeof path, "/spikes/%s/timestamps", pop);
  double *t = read_all(f, path, 0, n);
  snprintf(path, sizeof path, "/spikes/%s/node_ids", pop);
  hsize_t m;
  uint64_t *g = read_all(f, path, 1, &m);
  spike *s = malloc(sizeof *s * (*n + 1));
  for (hsize_t k = 0; k < *n; k++)
    s[k] = (spike){g[k], t[k]};
  qsort(s, *n, sizeof *s, by_gid_time);
  free(t);
  free(g);
  return s;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: compare_outputs A.h5 B.h5 VOLT_TOL_MV TIME_TOL_MS [population]\n");
    return 2;
  }
  const char *pop = argc > 5 ? argv[5] : "default";
  double vtol = atof(argv[3]), ttol = atof(argv[4]);
  hid_t a = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t b = H5Fopen(argv[2], H5F_ACC_RDONLY, H5P_DEFAULT);
  if (a < 0 || b < 0) {
    fprintf(stderr, "compare_outputs: cannot open %s or %s\n", argv[1], argv[2]);
    return 1;
  }
  char path[256];
  snprintf(path, sizeof path, "/report/%s/data", pop);
  hsize_t na, nb;
  double *va = read_all(a, path, 0, &na), *vb = read_all(b, path, 0, &nb);
  int fail = 0;
  double dv = 0.0;
  if (na != nb) {
    fprintf(stderr, "FAIL: %s has %llu values in one file, %llu in the other\n", path,
            (unsigned long long)na, (unsigned long long)nb);
    fail = 1;
  } else {
    for (hsize_t k = 0; k < na; k++) {
      double d = fabs(va[k] - vb[k]);
      if (!(d <= dv))
        dv = d;
    }
  }
  hsize_t sa, sb;
  spike *pa = read_spikes(a, pop, &sa), *pb = read_spikes(b, pop, &sb);
  double dt = 0.0;
  if (sa != sb) {
    fprintf(stderr, "FAIL: %llu spikes against %llu\n", (unsigned long long)sa,
            (unsigned long long)sb);
    fail = 1;
  } else {
    for (hsize_t k = 0; k < sa; k++) {
      if (pa[k].gid != pb[k].gid) {
        fprintf(stderr, "FAIL: spike %llu is from gid %llu in one file, %llu in the other\n",
                (unsigned long long)k, (unsigned long long)pa[k].gid,
                (unsigned long long)pb[k].gid);
        fail = 1;
        break;
      }
      double d = fabs(pa[k].t - pb[k].t);
      if (d > dt)
        dt = d;
    }
  }
  printf("%s vs %s: %llu voltages, max |dv| = %.3e mV (tolerance %.1e); %llu spikes, max |dt| = "
         "%.3e ms (tolerance %.1e)\n",
         argv[1], argv[2], (unsigned long long)na, dv, vtol, (unsigned long long)sa, dt, ttol);
  if (!(dv <= vtol) || !(dt <= ttol))
    fail = 1;
  free(va);
  free(vb);
  free(pa);
  free(pb);
  H5Fclose(a);
  H5Fclose(b);
  return fail;
}
