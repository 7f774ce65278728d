/* Experiment knobs from the environment (the GPU kernels' settings, docs/gpu.md "Knobs"): one
 * parser for all of them, strict about what counts as a number. */
#ifndef SE_ENV_H
#define SE_ENV_H

#include <limits.h>
#include <stdlib.h>

/* The environment's integer `name`, or fallback where it is unset, empty or not a whole number.
 * Not collective. */
static inline long se_env_long(const char *name, long fallback) {
  const char *s = getenv(name);
  char *end = NULL;
  const long v = s && *s ? strtol(s, &end, 10) : fallback;
  return s && *s && end && !*end ? v : fallback;
}

/* The environment's flag `name`: 1 where it is a non-zero integer, 0 where it is 0, dflt where it
 * is unset or not a number. Not collective. */
static inline int se_env_flag(const char *name, int dflt) {
  const long v = se_env_long(name, LONG_MIN);
  return v == LONG_MIN ? dflt : v != 0;
}

#endif
