/* splitmix64 (Steele, Lea, Flood 2014): the one small deterministic generator of the project,
 * for synthetic geometry, generated cases and test data. Host and device agree bit for bit. */
#ifndef SE_RANDOM_H
#define SE_RANDOM_H

#include <stdint.h>

#ifdef __CUDACC__
#define SE_RANDOM_HD __host__ __device__
#else
#define SE_RANDOM_HD
#endif

/* A bijective mix of 64 bits: splitmix64's output for the state z (z + gamma, finalised).
 * Counter-based streams hash a counter with it. */
SE_RANDOM_HD static inline uint64_t se_mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* The next value of the splitmix64 stream whose state is *state (advanced). */
SE_RANDOM_HD static inline uint64_t se_rand_next(uint64_t *state) {
  uint64_t z = se_mix64(*state);
  *state += 0x9E3779B97F4A7C15ull;
  return z;
}

/* A double in [0, 1) from the top 53 bits of bits. */
SE_RANDOM_HD static inline double se_rand_unit(uint64_t bits) {
  return (double)(bits >> 11) * 0x1.0p-53;
}

/* Uniform in [0, 1), and in [lo, hi), from the stream *state. */
SE_RANDOM_HD static inline double se_rand_u01(uint64_t *state) {
  return se_rand_unit(se_rand_next(state));
}
SE_RANDOM_HD static inline double se_rand_uniform(uint64_t *state, double lo, double hi) {
  return lo + (hi - lo) * se_rand_u01(state);
}

/* Uniform in [0, 1) from a counter-based stream: the hash of (*counter)++. */
SE_RANDOM_HD static inline double se_rand_counter_u01(uint64_t *counter) {
  return se_rand_unit(se_mix64((*counter)++));
}

#endif
