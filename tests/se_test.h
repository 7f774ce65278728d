/* Minimal test helpers: checks that count failures and print what differed. */
#ifndef SE_TEST_H
#define SE_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct se_test_state {
  int checks, failures;
} se_test_state;

#define SE_EXPECT(st, cond, ...)                                              \
  do {                                                                        \
    (st)->checks++;                                                           \
    if (!(cond)) {                                                            \
      (st)->failures++;                                                       \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);         \
      fprintf(stderr, __VA_ARGS__);                                           \
      fprintf(stderr, "\n");                                                  \
    }                                                                         \
  } while (0)

/* Prints the summary line and returns the process exit code. */
static inline int se_test_finish(const se_test_state *st, const char *name) {
  printf("%s: %d checks, %d failed\n", name, st->checks, st->failures);
  return st->failures ? 1 : 0;
}

#endif
