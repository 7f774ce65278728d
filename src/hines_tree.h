/* The Hines tree convention shared by the CPU and GPU solvers: rows numbered parents first. */
#ifndef SE_HINES_TREE_H
#define SE_HINES_TREE_H

#include <stdint.h>

#include "simengine/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SE_OK when parent (n rows) is a Hines tree: parent[0] = -1, 0 <= parent[i] < i; else
 * SE_ERR_ARG naming the first bad entry, the message prefixed by who. Not collective. */
int se_hines_check_parents(const int32_t *parent, int32_t n, const char *who, se_error *err);

#ifdef __cplusplus
}
#endif

#endif
