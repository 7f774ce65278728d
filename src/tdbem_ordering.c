/* Unknown orderings of the tdbem workload (paper 002 Section 7.4.1, docs/tdbem.md): the unknowns
 * sorted along a Morton or Hilbert curve over the cube that bounds their positions, the
 * ordering-quality score, and the renumbering of slices and vectors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "se_error.h"
#include "tdbem_ordering.h"

/* Bits per coordinate: three coordinates interleave into a 63-bit key. */
enum { CURVE_BITS = 21 };

/* The key of one unknown and its original index, sorted by key then index (deterministic). */
typedef struct keyed {
  uint64_t key;
  int64_t index;
} keyed;

static int keyed_compare(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  if (x->key != y->key)
    return x->key < y->key ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

/* The bits of c[0], c[1], c[2] interleaved from the top level down, c[0] the most significant
 * of each level's three bits. */
static uint64_t interleave(const uint32_t c[3]) {
  uint64_t key = 0;
  for (int b = CURVE_BITS - 1; b >= 0; b--)
    for (int a = 0; a < 3; a++)
      key = (key << 1) | ((c[a] >> b) & 1u);
  return key;
}

/* Skilling's transform of grid coordinates into the "transposed" Hilbert index (J. Skilling,
 * "Programming the Hilbert curve", AIP Conf. Proc. 707, 2004): interleaving the result gives the
 * distance along the 3-D Hilbert curve; consecutive distances are neighbouring grid cells. */
static void hilbert_transpose(uint32_t x[3]) {
  for (uint32_t q = 1u << (CURVE_BITS - 1); q > 1; q >>= 1) {
    const uint32_t p = q - 1;
    for (int i = 0; i < 3; i++) {
      if (x[i] & q) {
        x[0] ^= p; /* invert */
      } else {
        const uint32_t t = (x[0] ^ x[i]) & p; /* exchange */
        x[0] ^= t;
        x[i] ^= t;
      }
    }
  }
  for (int i = 1; i < 3; i++) /* Gray encode */
    x[i] ^= x[i - 1];
  uint32_t t = 0;
  for (uint32_t q = 1u << (CURVE_BITS - 1); q > 1; q >>= 1)
    if (x[2] & q)
      t ^= q - 1;
  for (int i = 0; i < 3; i++)
    x[i] ^= t;
}

int se_tdbem_ordering(const double *positions, int64_t n, se_ordering kind, int64_t *perm,
                      se_error *err) {
  if (n < 0)
    SE_FAIL(err, SE_ERR_ARG, "ordering: %lld unknowns", (long long)n);
  if (kind != SE_ORDER_ORIGINAL && kind != SE_ORDER_MORTON && kind != SE_ORDER_HILBERT)
    SE_FAIL(err, SE_ERR_ARG, "ordering: unknown kind %d", (int)kind);
  if (n == 0)
    return SE_OK;
  if (!perm)
    SE_FAIL(err, SE_ERR_ARG, "ordering: no permutation array given");
  if (kind == SE_ORDER_ORIGINAL) {
    for (int64_t u = 0; u < n; u++)
      perm[u] = u;
    return SE_OK;
  }
  if (!positions)
    SE_FAIL(err, SE_ERR_ARG, "ordering: %s needs the positions of the unknowns",
            kind == SE_ORDER_MORTON ? "Morton" : "Hilbert");
  double lo[3], hi[3];
  for (int a = 0; a < 3; a++)
    lo[a] = hi[a] = positions[a];
  for (int64_t i = 0; i < n; i++)
    for (int a = 0; a < 3; a++) {
      const double x = positions[i * 3 + a];
      if (!isfinite(x))
        SE_FAIL(err, SE_ERR_INPUT, "ordering: position %lld, coordinate %d is %g",
                (long long)i, a, x);
      lo[a] = x < lo[a] ? x : lo[a];
      hi[a] = x > hi[a] ? x : hi[a];
    }
  /* the bounding cube (largest extent on every axis), cut into 2^CURVE_BITS cells per axis */
  double side = 0.0;
  for (int a = 0; a < 3; a++)
    side = hi[a] - lo[a] > side ? hi[a] - lo[a] : side;
  const double cells = (double)(1u << CURVE_BITS), scale = side > 0.0 ? cells / side : 0.0;
  keyed *keys;
  SE_CALLOC(err, keys, (size_t)n, "the curve keys");
  for (int64_t i = 0; i < n; i++) {
    uint32_t c[3];
    for (int a = 0; a < 3; a++) {
      const double cell = floor((positions[i * 3 + a] - lo[a]) * scale);
      c[a] = cell >= cells ? (1u << CURVE_BITS) - 1 : (uint32_t)cell;
    }
    if (kind == SE_ORDER_HILBERT)
      hilbert_transpose(c);
    keys[i].key = interleave(c);
    keys[i].index = i;
  }
  qsort(keys, (size_t)n, sizeof *keys, keyed_compare);
  for (int64_t u = 0; u < n; u++)
    perm[u] = keys[u].index;
  free(keys);
  return SE_OK;
}

int se_tdbem_ordering_quality(const se_tdbem_slices *s, double *sum, int64_t *scored,
                              se_error *err) {
  if (!s || !sum || !scored)
    SE_FAIL(err, SE_ERR_ARG, "ordering quality: no slices or no result given");
  for (int64_t j = 0; j < s->count; j++) {
    const int64_t begin = s->slice_ptr[j], end = s->slice_ptr[j + 1];
    if (end - begin < 2)
      continue;
    double pairs = 0.0;
    for (int64_t r = begin; r + 1 < end; r++) {
      const int64_t a0 = s->kstart[r], a1 = a0 + s->val_ptr[r + 1] - s->val_ptr[r];
      const int64_t b0 = s->kstart[r + 1], b1 = b0 + s->val_ptr[r + 2] - s->val_ptr[r + 1];
      const int64_t shared = (a1 < b1 ? a1 : b1) - (a0 > b0 ? a0 : b0);
      if (shared > 0)
        pairs += (double)shared * (double)shared;
    }
    *sum += pairs / (double)(end - begin - 1);
    ++*scored;
  }
  return SE_OK;
}

int se_tdbem_permutation_invert(const int64_t *perm, int64_t n, int64_t *inv, se_error *err) {
  if (n < 0 || (n > 0 && (!perm || !inv)))
    SE_FAIL(err, SE_ERR_ARG, "permutation: %lld entries or no arrays given", (long long)n);
  for (int64_t i = 0; i < n; i++)
    inv[i] = -1;
  for (int64_t u = 0; u < n; u++) {
    if (perm[u] < 0 || perm[u] >= n)
      SE_FAIL(err, SE_ERR_ARG, "permutation: entry %lld is %lld, outside [0, %lld)",
              (long long)u, (long long)perm[u], (long long)n);
    if (inv[perm[u]] >= 0)
      SE_FAIL(err, SE_ERR_ARG, "permutation: entries %lld and %lld are both %lld",
              (long long)inv[perm[u]], (long long)u, (long long)perm[u]);
    inv[perm[u]] = u;
  }
  return SE_OK;
}

/* A row-vector of the renumbered slice: its new row and its index in the old slices. */
typedef struct renamed {
  int32_t row;
  int64_t old;
} renamed;

static int renamed_compare(const void *a, const void *b) {
  const renamed *x = a, *y = b;
  if (x->row != y->row)
    return x->row < y->row ? -1 : 1;
  return (x->old > y->old) - (x->old < y->old);
}

/* The body of se_tdbem_slices_permute; out's arrays and inv are the caller's to free. */
static int permute_into(const se_tdbem_slices *s, const int64_t *perm, int64_t *inv,
                        se_tdbem_slices *out, se_error *err) {
  SE_TRY(se_tdbem_permutation_invert(perm, s->n, inv, err));
  SE_CALLOC(err, out->slice_ptr, (size_t)(out->count + 1), "the renumbered slice pointers");
  int64_t values = 0, widest = 0;
  for (int64_t u = 0; u < out->count; u++) {
    const int64_t j = perm[out->first + u] - s->first;
    if (j < 0 || j >= s->count)
      SE_FAIL(err, SE_ERR_ARG,
              "permute: new slice %lld is old slice %lld, not among the slices held [%lld, %lld)",
              (long long)(out->first + u), (long long)perm[out->first + u],
              (long long)s->first, (long long)(s->first + s->count));
    const int64_t rows = s->slice_ptr[j + 1] - s->slice_ptr[j];
    out->slice_ptr[u + 1] = out->slice_ptr[u] + rows;
    values += s->val_ptr[s->slice_ptr[j + 1]] - s->val_ptr[s->slice_ptr[j]];
    widest = rows > widest ? rows : widest;
  }
  out->n_rowvectors = out->slice_ptr[out->count];
  out->n_values = values;
  const size_t size = s->precision == SE_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  SE_CALLOC(err, out->row, (size_t)out->n_rowvectors, "the renumbered rows");
  SE_CALLOC(err, out->kstart, (size_t)out->n_rowvectors, "the renumbered kstart");
  SE_CALLOC(err, out->val_ptr, (size_t)(out->n_rowvectors + 1), "the renumbered value pointers");
  out->val = calloc(values ? (size_t)values : 1, size);
  if (!out->val)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory allocating %lld renumbered values",
            (long long)values);
  renamed *order;
  SE_CALLOC(err, order, (size_t)widest, "the row order of a slice");
  for (int64_t u = 0; u < out->count; u++) {
    const int64_t j = perm[out->first + u] - s->first, begin = s->slice_ptr[j];
    const int64_t rows = s->slice_ptr[j + 1] - begin;
    for (int64_t r = 0; r < rows; r++) {
      const int32_t i = s->row[begin + r];
      if (i < 0 || i >= s->n) {
        free(order);
        SE_FAIL(err, SE_ERR_INPUT, "permute: slice %lld has row %d outside [0, %lld)",
                (long long)(s->first + j), (int)i, (long long)s->n);
      }
      order[r].row = (int32_t)inv[i];
      order[r].old = begin + r;
    }
    qsort(order, (size_t)rows, sizeof *order, renamed_compare);
    for (int64_t r = 0; r < rows; r++) {
      const int64_t to = out->slice_ptr[u] + r, from = order[r].old;
      const int64_t d = s->val_ptr[from + 1] - s->val_ptr[from];
      out->row[to] = order[r].row;
      out->kstart[to] = s->kstart[from];
      out->val_ptr[to + 1] = out->val_ptr[to] + d;
      memcpy((char *)out->val + (size_t)out->val_ptr[to] * size,
             (const char *)s->val + (size_t)s->val_ptr[from] * size, (size_t)d * size);
    }
  }
  free(order);
  return SE_OK;
}

int se_tdbem_slices_permute(const se_tdbem_slices *s, const int64_t *perm, int64_t first,
                            int64_t count, se_tdbem_slices *out, se_error *err) {
  if (!s || !perm || !out)
    SE_FAIL(err, SE_ERR_ARG, "permute: no slices, permutation or output given");
  if (first < 0 || count < 0 || first + count > s->n)
    SE_FAIL(err, SE_ERR_ARG, "permute: interval [%lld, %lld + %lld) outside [0, %lld)",
            (long long)first, (long long)first, (long long)count, (long long)s->n);
  memset(out, 0, sizeof *out);
  out->precision = s->precision;
  out->n = s->n;
  out->kmax = s->kmax;
  out->first = first;
  out->count = count;
  int64_t *inv;
  SE_CALLOC(err, inv, (size_t)s->n, "the inverse permutation");
  const int rc = permute_into(s, perm, inv, out, err);
  free(inv);
  if (rc != SE_OK)
    se_tdbem_slices_free(out);
  return rc;
}

void se_tdbem_vector_permute(const int64_t *perm, int64_t n, const double *x, double *x_new) {
  for (int64_t u = 0; u < n; u++)
    x_new[u] = x[perm[u]];
}

void se_tdbem_vector_unpermute(const int64_t *perm, int64_t n, const double *x_new, double *x) {
  for (int64_t u = 0; u < n; u++)
    x[perm[u]] = x_new[u];
}
