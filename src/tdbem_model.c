/* The in-memory model of the tdbem workload (include/simengine/tdbem.h): freeing the slices of an
 * interval and M0. */
#include <stdlib.h>
#include <string.h>

#include "simengine/tdbem.h"

se_tdbem_slices se_tdbem_slices_view(const se_tdbem_slices *s, int64_t j0, int64_t count) {
  se_tdbem_slices v = *s;
  v.first = s->first + j0;
  v.count = count;
  v.slice_ptr = s->slice_ptr + j0;
  v.n_rowvectors = s->slice_ptr[j0 + count] - s->slice_ptr[j0];
  v.n_values = s->val_ptr[s->slice_ptr[j0 + count]] - s->val_ptr[s->slice_ptr[j0]];
  return v;
}

void se_tdbem_slices_free(se_tdbem_slices *s) {
  if (!s)
    return;
  free(s->slice_ptr);
  free(s->row);
  free(s->kstart);
  free(s->val_ptr);
  free(s->val);
  memset(s, 0, sizeof *s);
}

void se_tdbem_m0_free(se_tdbem_m0 *m0) {
  if (!m0)
    return;
  free(m0->row);
  free(m0->col);
  free(m0->val);
  memset(m0, 0, sizeof *m0);
}
