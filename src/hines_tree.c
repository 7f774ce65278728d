/* The Hines tree convention (hines_tree.h). */
#include "hines_tree.h"

#include "se_error.h"

int se_hines_check_parents(const int32_t *parent, int32_t n, const char *who, se_error *err) {
  if (parent[0] != -1)
    SE_FAIL(err, SE_ERR_ARG, "%s: row 0 must be the root (parent -1), its parent is %d", who,
            (int)parent[0]);
  for (int32_t i = 1; i < n; i++)
    if (parent[i] < 0 || parent[i] >= i)
      SE_FAIL(err, SE_ERR_ARG, "%s: row %d has parent %d; parents must come first (0 <= parent < %d)",
              who, (int)i, (int)parent[i], (int)i);
  return SE_OK;
}
